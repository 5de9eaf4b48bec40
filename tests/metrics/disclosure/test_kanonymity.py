# SPDX-License-Identifier: BSD-3-Clause
"""The k-anonymity family on exact quasi-identifier classes."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from synthrisk import KAnonymity
from synthrisk.exceptions import ParameterError

REAL = pd.DataFrame(
    {"a": list("xxxyyz"), "b": [1, 1, 1, 2, 2, 3], "s": ["p", "q", "q", "p", "p", "r"]}
)
SYN = pd.DataFrame(
    {"a": list("xxyzw"), "b": [1, 1, 2, 3, 4], "s": ["p", "p", "q", "r", "r"]}
)


def test_hand_computed_case() -> None:
    result = KAnonymity(quasi_identifiers=["a", "b"], sensitive=["s"], k=3).compute(
        REAL, SYN, REAL
    )
    b = result.breakdown
    # synthetic records behind 3, 3, 2, 1, 0 real records -> 2 of 5 behind 1..2
    assert result.score == pytest.approx(0.4)
    assert b["k_map"] == 1
    assert b["synthetic_without_real_share"] == pytest.approx(0.2)
    assert b["delta_presence"] == {"delta_max": 1.0, "delta_min": 0.5}
    assert b["real"]["k"] == 1
    assert b["real"]["n_classes"] == 3
    # synthetic class (x, 1) = [p, p] against the table's p 0.4, q 0.2, r 0.4 -> 0.6; (y, 2) = [q] -> 0.8
    assert b["synthetic"]["t"] == pytest.approx(0.8)
    assert [c["t"] for c in b["classes"]] == pytest.approx([0.6, 0.8, 0.6])
    assert [c["n_real"] for c in b["classes"]] == [1, 2, 3]
    assert result.records["real_records_behind"].values.tolist() == [3, 3, 2, 1, 0]
    assert "class_values" in result.value_keys
    assert b["class_values"][0] == {"a": "z", "b": 3.0}


def _oracle(
    frame: pd.DataFrame, qi: list[str], sens: str, c: float, ordered: bool
) -> dict[str, float]:
    overall = frame[sens].value_counts(normalize=True)
    values = sorted(overall.index)
    ks, distinct, ent, rec, ts = [], [], [], [], []
    for _, group in frame.groupby(qi, dropna=False):
        counts = group[sens].value_counts()
        p = counts / counts.sum()
        ks.append(len(group))
        distinct.append(len(counts))
        ent.append(math.exp(-(p * np.log(p)).sum()))
        r = sorted(counts.tolist(), reverse=True)
        rec.append(
            max(ell for ell in range(1, len(r) + 1) if r[0] < c * sum(r[ell - 1 :]))
        )
        pv = np.array([p.get(v, 0.0) for v in values])
        qv = np.array([overall[v] for v in values])
        if ordered:
            ts.append(np.abs(np.cumsum(pv - qv)).sum() / (len(values) - 1))
        else:
            ts.append(0.5 * np.abs(pv - qv).sum())
    return {
        "k": min(ks),
        "distinct_l": min(distinct),
        "entropy_l": min(ent),
        "recursive_l": min(rec),
        "t": max(ts),
    }


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ordered", [False, True])
def test_matches_groupby_oracle(seed: int, ordered: bool) -> None:
    rng = np.random.default_rng(seed)

    def table(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "a": rng.choice(["u", "v", "w"], n),
                "b": rng.integers(0, 4, n).astype(float),
                "s": rng.integers(0, 6, n).astype(float)
                if ordered
                else rng.choice(list("pqrs"), n),
            }
        )

    real, syn = table(200), table(150)
    result = KAnonymity(quasi_identifiers=["a", "b"], sensitive=["s"], c=1.5).compute(
        real, syn
    )
    assert result.breakdown["t_distance"] == ("ordered" if ordered else "equal")
    for name, frame in (("real", real), ("synthetic", syn)):
        expected = _oracle(frame, ["a", "b"], "s", 1.5, ordered)
        got = result.breakdown[name]
        for key, value in expected.items():
            assert got[key] == pytest.approx(value, abs=1e-9), (name, key)


def test_copies_leak_and_new_people_do_not() -> None:
    rng = np.random.default_rng(11)
    n = 3000
    pop = pd.DataFrame(
        {
            "age": rng.integers(18, 90, 3 * n),
            "sex": rng.choice(["f", "m"], 3 * n),
            "zip": rng.integers(0, 30, 3 * n),
        }
    )
    real, hold, fresh = pop.iloc[:n], pop.iloc[n : 2 * n], pop.iloc[2 * n :]
    qi = ["age", "sex", "zip"]
    copy = KAnonymity(quasi_identifiers=qi, k=3).compute(real, real, hold)
    assert copy.breakdown["control"]["effect"] > 0.1
    assert copy.breakdown["control"]["p_value"] < 1e-6
    null = KAnonymity(quasi_identifiers=qi, k=3).compute(real, fresh, hold)
    assert null.breakdown["control"]["p_value"] > 0.01
    assert abs(null.breakdown["control"]["effect"]) < 0.03


def test_parameters() -> None:
    with pytest.raises(ParameterError, match="also quasi-identifiers"):
        KAnonymity(quasi_identifiers=["a"], sensitive=["a"])
    with pytest.raises(ParameterError, match="`c` must be"):
        KAnonymity(quasi_identifiers=["a"], c=0.5)
    with pytest.raises(ParameterError, match="t_distance"):
        KAnonymity(quasi_identifiers=["a"], t_distance="emd")
    with pytest.raises(ParameterError, match="not in the tables"):
        KAnonymity(quasi_identifiers=["zz"]).compute(REAL, SYN)


def test_without_sensitive_only_sizes() -> None:
    result = KAnonymity(quasi_identifiers=["a"]).compute(REAL, SYN)
    assert result.breakdown["real"]["k"] == 1
    assert result.breakdown["t_distance"] is None
    assert "control" not in result.breakdown
