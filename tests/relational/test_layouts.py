# SPDX-License-Identifier: BSD-3-Clause
"""A hospital-like layout unlike the bank and the clinic: sibling child tables, a grandchild,
heavy-tailed history lengths and codes with many levels (seeded, drawn here)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from synthrisk.relational import MultiTableReport, evaluate_tables
from synthrisk.relational.evaluate import _carry_tables

Tables = dict[str, pd.DataFrame]

WARDS = np.array([f"W{i:02d}" for i in range(40)])
DIAGNOSES = np.array([f"D{i:03d}" for i in range(300)])
DRUGS = np.array([f"R{i:03d}" for i in range(200)])
PROCEDURES = np.array([f"P{i:03d}" for i in range(150)])
REGIONS = np.array([f"G{i}" for i in range(12)])


def _link(parent: str, key: str, child: str) -> dict[str, str]:
    return {
        "parent_table_name": parent,
        "parent_primary_key": key,
        "child_table_name": child,
        "child_foreign_key": key,
    }


def _columns(**sdtypes: str) -> dict[str, dict[str, str]]:
    return {name: {"sdtype": sdtype} for name, sdtype in sdtypes.items()}


METADATA: dict[str, Any] = {
    "METADATA_SPEC_VERSION": "MULTI_TABLE_V1",
    "tables": {
        "patients": {
            "primary_key": "patient_id",
            "columns": _columns(
                patient_id="id",
                birth="datetime",
                sex="categorical",
                region="categorical",
            ),
        },
        "admissions": {
            "primary_key": "admission_id",
            "sequence_index": "admitted",
            "columns": _columns(
                admission_id="id",
                patient_id="id",
                admitted="datetime",
                ward="categorical",
                diagnosis="categorical",
                days="numerical",
            ),
        },
        "procedures": {
            "primary_key": "procedure_id",
            "columns": _columns(
                procedure_id="id",
                admission_id="id",
                code="categorical",
                cost="numerical",
            ),
        },
        "prescriptions": {
            "primary_key": "prescription_id",
            "columns": _columns(
                prescription_id="id",
                patient_id="id",
                drug="categorical",
                dose="numerical",
            ),
        },
    },
    "relationships": [
        _link("patients", "patient_id", "admissions"),
        _link("admissions", "admission_id", "procedures"),
        _link("patients", "patient_id", "prescriptions"),
    ],
}


def _zipf(rng: np.random.Generator, n: int, levels: np.ndarray) -> np.ndarray:
    weights = 1.0 / np.arange(1, levels.size + 1) ** 1.1
    return levels[rng.choice(levels.size, size=n, p=weights / weights.sum())]


def draw_patients(n: int, rng: np.random.Generator, prefix: str) -> Tables:
    """``n`` patients with all their rows; 0.5 % of them with 15 to 27 admissions."""
    pid = np.array([f"{prefix}p{i}" for i in range(n)])
    days_born = rng.integers(0, 70 * 365, n)
    patients = pd.DataFrame(
        {
            "patient_id": pid,
            "birth": pd.Timestamp("1930-01-01") + pd.to_timedelta(days_born, unit="D"),
            "sex": rng.choice(["F", "M"], n),
            "region": rng.choice(REGIONS, n),
        }
    )
    n_admissions = np.minimum(rng.geometric(0.5, n), 8)
    longest = rng.choice(n, max(1, round(0.005 * n)), replace=False)
    n_admissions[longest] = rng.integers(15, 28, longest.size)
    owner = np.repeat(pid, n_admissions)
    m = owner.size
    aid = np.array([f"{prefix}a{i}" for i in range(m)])
    admissions = pd.DataFrame(
        {
            "admission_id": aid,
            "patient_id": owner,
            "admitted": pd.Timestamp("2015-01-01")
            + pd.to_timedelta(rng.integers(0, 8 * 365, m), unit="D"),
            "ward": _zipf(rng, m, WARDS),
            "diagnosis": _zipf(rng, m, DIAGNOSES),
            "days": rng.geometric(0.25, m).astype(float),
        }
    )
    of_admission = np.repeat(aid, rng.poisson(1.2, m))
    q = of_admission.size
    procedures = pd.DataFrame(
        {
            "procedure_id": [f"{prefix}x{i}" for i in range(q)],
            "admission_id": of_admission,
            "code": _zipf(rng, q, PROCEDURES),
            "cost": np.round(rng.lognormal(6, 1, q), 2),
        }
    )
    of_patient = np.repeat(pid, rng.poisson(2.0, n))
    r = of_patient.size
    prescriptions = pd.DataFrame(
        {
            "prescription_id": [f"{prefix}r{i}" for i in range(r)],
            "patient_id": of_patient,
            "drug": _zipf(rng, r, DRUGS),
            "dose": np.round(rng.gamma(2.0, 50.0, r), 1),
        }
    )
    return {
        "patients": patients,
        "admissions": admissions,
        "procedures": procedures,
        "prescriptions": prescriptions,
    }


def _keep(tables: Tables, pids: np.ndarray) -> Tables:
    """The patients ``pids`` with all their rows."""
    admissions = tables["admissions"][tables["admissions"].patient_id.isin(pids)]
    return {
        "patients": tables["patients"][tables["patients"].patient_id.isin(pids)],
        "admissions": admissions,
        "procedures": tables["procedures"][
            tables["procedures"].admission_id.isin(admissions.admission_id)
        ],
        "prescriptions": tables["prescriptions"][
            tables["prescriptions"].patient_id.isin(pids)
        ],
    }


def _copy(tables: Tables, pids: np.ndarray, tag: str) -> Tables:
    """Verbatim copies of the patients ``pids`` with all their rows, under new keys."""
    out = {name: frame.copy() for name, frame in _keep(tables, pids).items()}
    for name, frame in out.items():
        for key in [c for c in frame.columns if c.endswith("_id")]:
            frame[key] = tag + frame[key]
        out[name] = frame
    return out


def _concat(*sides: Tables) -> Tables:
    return {
        name: pd.concat([s[name] for s in sides], ignore_index=True)
        for name in sides[0]
    }


def hospital(
    n_patients: int = 2600, seed: int = 0, copy_share: float = 0.02
) -> tuple[Tables, Tables, dict[str, Tables]]:
    """Training and holdout patients (25 % held out) and four synthetic versions.

    ``null``: new patients; ``whole_copies``: ``copy_share`` of the synthetic patients
    are training patients with all their rows; ``subtree_copies``: as many new patients
    carry a training patient's admissions with their procedures, verbatim, while their
    prescriptions are new; ``long_copies``: copies of the 0.5 % of training patients
    with the most admissions (15 to 27), with all their rows.
    """
    rng = np.random.default_rng(seed)
    real = draw_patients(n_patients, rng, "")
    ids = real["patients"].patient_id.to_numpy()
    held = rng.permutation(ids.size) < round(0.25 * ids.size)
    train, holdout = _keep(real, ids[~held]), _keep(real, ids[held])
    null = draw_patients(int((~held).sum()), rng, "s")
    new_ids = null["patients"].patient_id.to_numpy()
    train_ids = train["patients"].patient_id.to_numpy()
    k = round(copy_share * train_ids.size)

    victims = rng.choice(train_ids, k, replace=False)
    whole = _concat(_keep(null, new_ids[k:]), _copy(train, victims, "c"))

    copied = _copy(train, rng.choice(train_ids, k, replace=False), "c")
    hosts = dict(zip(copied["patients"].patient_id, new_ids[:k], strict=True))
    copied["admissions"]["patient_id"] = copied["admissions"].patient_id.map(hosts)
    kept = _keep(null, new_ids[k:])
    subtree = {
        "patients": null["patients"],
        "admissions": pd.concat([kept["admissions"], copied["admissions"]]),
        "procedures": pd.concat([kept["procedures"], copied["procedures"]]),
        "prescriptions": null["prescriptions"],
    }

    lengths = train["admissions"].patient_id.value_counts(sort=True)
    longest = lengths.index[: round(0.005 * train_ids.size)].to_numpy()
    long = _concat(_keep(null, new_ids[longest.size :]), _copy(train, longest, "c"))
    synthetic = {
        "null": null,
        "whole_copies": whole,
        "subtree_copies": subtree,
        "long_copies": long,
    }
    return train, holdout, synthetic


def _evaluate(seed: int, scenario: str, *, tables: bool = False) -> MultiTableReport:
    train, holdout, synthetic = hospital(seed=seed)
    return evaluate_tables(
        train,
        synthetic[scenario],
        holdout,
        metadata=METADATA,
        table_metrics=None if tables else [],
    )


@pytest.fixture(scope="module")
def reports() -> dict[str, MultiTableReport]:
    return {
        "whole_copies": _evaluate(0, "whole_copies"),
        "subtree_copies": _evaluate(0, "subtree_copies", tables=True),
        "long_copies": _evaluate(0, "long_copies"),
    }


def test_the_layout_is_heavy_tailed() -> None:
    train, holdout, synthetic = hospital(seed=0)
    assert (len(train["patients"]), len(holdout["patients"])) == (1950, 650)
    lengths = train["admissions"].patient_id.value_counts()
    assert lengths.iloc[: round(0.005 * 1950)].between(15, 27).all()
    assert lengths.median() <= 2
    copied = synthetic["subtree_copies"]
    assert copied["prescriptions"].equals(synthetic["null"]["prescriptions"])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_new_people_pass(seed: int) -> None:
    report = _evaluate(seed, "null")
    assert report.verdict == "pass", report.reason
    assert report.linkage.level == "pass"
    # the whole person, then each subtree, breadth first: admissions (with
    # procedures), prescriptions, procedures
    assert [a.label for a in report.linkage.attacks] == [
        "root_to_children",
        "history",
        "row_set",
        "history · admissions",
        "row_set · admissions",
        "history · prescriptions",
        "row_set · prescriptions",
        "history · procedures",
        "row_set · procedures",
    ]


def test_whole_copies_fail(reports: dict[str, MultiTableReport]) -> None:
    report = reports["whole_copies"]
    assert report.verdict == "fail"
    assert report.people.verdict is not None
    assert report.people.verdict["identification"].level == "fail"
    root = report.linkage.attacks[0]
    assert (root.name, root.linked_training, root.linked_holdout) == (
        "root_to_children",
        39,
        0,
    )
    assert report.linkage.level == "fail"
    assert report.linkage.p_value < 1e-3


def test_a_copied_admissions_subtree_under_new_patients_fails(
    reports: dict[str, MultiTableReport],
) -> None:
    report = reports["subtree_copies"]
    assert report.verdict == "fail"
    attacks = {a.label: a for a in report.linkage.attacks}
    # the root rows are new, and the whole person's history is half new ...
    assert attacks["root_to_children"].linked_training == 0
    assert attacks["history"].p_value > 0.01
    # ... but the copied admissions (with their procedures) are linked on their own
    for label in (
        "history · admissions",
        "history · procedures",
        "row_set · procedures",
    ):
        assert attacks[label].p_value < 1e-3, label
        assert attacks[label].subtree == label.split(" · ")[1]
    procedures = attacks["history · procedures"]
    assert (procedures.linked_training, procedures.linked_holdout) == (35, 0)
    smallest = min(a.p_value for a in report.linkage.attacks)
    # combined by relabelling (min-p): correlated attacks cost less than Bonferroni's 9x
    assert report.linkage.method == "westfall_young_min_p"
    assert smallest <= report.linkage.p_value <= 9 * smallest
    assert report.linkage.p_value < 1e-3
    assert report.linkage.level == "fail"
    # the prescriptions are new; the admissions' own verdict fails and is carried
    assert report.table_verdicts["prescriptions"] == "pass"
    assert report.table_verdicts["admissions"] == "fail"
    assert "Tables: 'admissions', 'procedures' fail on their own" in report.reason
    restored = MultiTableReport.from_json(report.to_json())
    assert [a.subtree for a in restored.linkage.attacks] == [
        a.subtree for a in report.linkage.attacks
    ]


def test_a_failing_table_makes_the_release_review_at_least(
    reports: dict[str, MultiTableReport],
) -> None:
    tables = reports["subtree_copies"].tables
    assert _carry_tables("pass", tables) == (
        "review",
        " Tables: 'admissions', 'procedures' fail on their own, so the release reads at "
        "least review (see those tables' reports).",
    )
    assert _carry_tables("fail", tables)[0] == "fail"
    only = {"admissions": tables["admissions"]}
    assert "'admissions' fails on its own" in _carry_tables("pass", only)[1]
    passing = {"prescriptions": tables["prescriptions"]}
    assert _carry_tables("pass", passing) == ("pass", "")


def test_copies_of_the_longest_histories_are_caught(
    reports: dict[str, MultiTableReport],
) -> None:
    report = reports["long_copies"]
    assert report.verdict == "fail"
    assert report.people.verdict is not None
    assert report.people.verdict["identification"].level == "fail"
    parts = {
        c["part"]: c
        for c in report.people["identification"].breakdown["holdout_test"]["components"]
    }
    # the 10 copied people (15 to 27 admissions) are among the most isolated people:
    # 8 of them in the most isolated 1 %, all 10 in the 5 %
    # (the strata hold the training people among the 1 % and 5 % most isolated of all:
    # their size moves by a person or two with ties in the isolation distance)
    one, five = (
        parts[f"most isolated {s}, exact copies"]["training"] for s in ("1%", "5%")
    )
    assert one[0] == 8
    assert 20 <= one[1] <= 22
    assert five[0] == 10
    assert 99 <= five[1] <= 103
    assert parts["most isolated 1%, exact copies"]["p_value"] < 1e-6
    assert (
        "copies of 4 training people among the most isolated 1–5 % of people, by their "
        "rows (how many, how rare their codes) and summaries"
    ) in report.reason
