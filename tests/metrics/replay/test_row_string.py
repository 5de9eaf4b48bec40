from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from _fixtures import METADATA, tables

from synthrisk.metrics import RowStringReplay
from synthrisk.metrics.replay._minhash import jaccard_pairs
from synthrisk.metrics.replay.row_string import (
    _normalised,
    row_strings,
    unique_matches,
)


def _reformat(phone: str) -> str:
    """(212) 555-0199 -> 212-555-0199"""
    return phone.replace("(", "").replace(") ", "-")


def test_row_strings_as_a_csv_writer_writes_them() -> None:
    frame = pd.DataFrame(
        {"a": [1.5, np.nan], "b": ["x y", None], "c": [3, 4]}, columns=["a", "b", "c"]
    )
    assert row_strings(frame, ["a", "b", "c"]).tolist() == ["1.5,x y,3", ",,4"]


def test_character_jaccard_by_hand() -> None:
    # "abcdef" -> {abcde, bcdef}; "abcdeg" -> {abcde, bcdeg}: 1 shared of 3
    data, offsets = _normalised(np.array(["abcdef", "ABCDEG", "abcdef", "ab"], object))
    jac = jaccard_pairs(
        data, offsets, np.array([0, 0, 0]), np.array([1, 2, 3]), width=5, chars=True
    )
    np.testing.assert_allclose(jac, [1 / 3, 1.0, 0.0])
    # 4-grams: "abcdef" {abcd, bcde, cdef}, "abcdeg" {abcd, bcde, cdeg}: 2 of 4
    jac = jaccard_pairs(
        data, offsets, np.array([0]), np.array([1]), width=4, chars=True
    )
    np.testing.assert_allclose(jac, [0.5])


def test_unique_matches_counts_a_person_only_when_alone() -> None:
    # real items 0 (person 0), 1 (people 1 and 2), 2 (person 3); synthetic 10 -> 0,
    # 11 -> 1, 12 -> 2 and 0
    who = np.array([0, 1, 2, 3])
    start = np.array([0, 1, 3, 4])
    left = np.array([0, 1, 2, 0])
    right = np.array([10, 11, 12, 12])
    alone = unique_matches(left, right, who, start, 4)
    assert alone.tolist() == [True, False, False, False]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_new_people_pass(seed: int) -> None:
    real, holdout, synthetic = tables(800, seed=seed)
    result = RowStringReplay().compute(
        real, synthetic, holdout, metadata=METADATA, seed=seed
    )
    assert result.breakdown["replayed_training"] == 0
    assert result.breakdown["holdout_test"]["p_value"] == 1.0
    assert result.breakdown["unique_replayed_training"] == 0


def test_rows_with_formats_changed_fail_and_are_all_found() -> None:
    real, holdout, synthetic = tables(1000, seed=3)
    synthetic = synthetic.copy()
    k = 50  # 5 % of the synthetic rows
    synthetic.loc[: k - 1] = real.loc[: k - 1].to_numpy()
    synthetic.loc[: k // 2 - 1, "phone"] = [
        _reformat(p) for p in synthetic.loc[: k // 2 - 1, "phone"]
    ]
    synthetic.loc[k // 2 : k - 1, "age"] = synthetic.loc[k // 2 : k - 1, "age"] + 1
    result = RowStringReplay().compute(
        real, synthetic, holdout, metadata=METADATA, seed=3
    )
    bd = result.breakdown
    assert bd["replayed_training"] == k
    assert bd["replayed_holdout"] == 0
    assert bd["unique_replayed_training"] == k
    assert bd["holdout_test"]["p_value"] < 1e-10
    assert {tuple(e["synthetic_rows"]) for e in bd["replayed"]} == {
        (i,) for i in range(k)
    }
    assert all(
        0.9 <= e["jaccard"] < 1 and e["match"] == ["near"] for e in bd["replayed"]
    )
    assert result.records["replaying_rows"].index.tolist() == list(range(k))
    assert bd["chance_model"]["replayed"] == k


def test_coarse_ties_count_for_everyone_and_the_holdout_absorbs_them() -> None:
    rng = np.random.default_rng(5)

    def coarse(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "age": rng.integers(3, 6, size=n) * 10,
                "sex": rng.choice(["Female", "Male"], size=n),
                "job": rng.choice(["Sales", "Tech", "Adm-clerical"], size=n),
                "email": [f"u{i}@x.org" if i % 2 else "" for i in range(n)],
            }
        )

    md = {"columns": {"email": {"kind": "pii"}, "age": {"kind": "numerical"}}}
    real, holdout, synthetic = coarse(600), coarse(600), coarse(600)
    result = RowStringReplay().compute(real, synthetic, holdout, metadata=md, seed=0)
    bd = result.breakdown
    # the empty e-mail rows share 18 row strings: both sides are replayed alike
    assert bd["replayed_training"] > 100
    assert bd["replayed_holdout"] > 100
    assert bd["holdout_test"]["p_value"] > 0.01
    # the e-mails u1@x.org, ... recur in every table: unique on both sides alike
    assert bd["unique_replayed_holdout"] > 0


def test_default_run_only_with_id_pii_or_text() -> None:
    from synthrisk.schema.tables import prepare_tables

    real, holdout, synthetic = tables(50)
    with_text = prepare_tables(real, synthetic, holdout, metadata=METADATA)
    assert RowStringReplay.applies_by_default(with_text)
    plain = prepare_tables(
        real[["age"]],
        synthetic[["age"]],
        holdout[["age"]],
        metadata={"columns": {"age": {"kind": "numerical"}}},
    )
    assert not RowStringReplay.applies_by_default(plain)
