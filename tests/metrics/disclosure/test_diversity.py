# SPDX-License-Identifier: BSD-3-Clause
"""l-diversity and t-closeness of the synthetic table's quasi-identifier classes, by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from synthrisk import LDiversity, TCloseness, evaluate
from synthrisk.exceptions import ParameterError

# synthetic classes on `a`: x = [p, p, q], y = [p, p], z = [r]; the table: p 4/6, q 1/6, r 1/6
SYN = pd.DataFrame({"a": list("xxxyyz"), "s": list("ppqppr")})
# real classes: x = [p, q], y = [q], w = [p, r]; the table: p 2/5, q 2/5, r 1/5
REAL = pd.DataFrame({"a": list("xxyww"), "s": list("pqqpr")})


def test_l_diversity_by_hand() -> None:
    result = LDiversity(quasi_identifiers=["a"], sensitive=["s"]).compute(REAL, SYN)
    b = result.breakdown
    # distinct l per class: x 2, y 1, z 1 -> the 3 records of y and z are not 2-diverse
    assert result.score == pytest.approx(3 / 6)
    assert b["n_not_diverse"] == 3
    assert b["synthetic"]["distinct_l"] == 1
    assert b["synthetic"]["n_classes"] == 3
    assert b["synthetic"]["n_classes_not_diverse"] == 2
    # class x: entropy of (2/3, 1/3) -> exp(H) = 1.8899 < 2; y and z: exp(0) = 1
    h_x = -(2 / 3) * math.log(2 / 3) - (1 / 3) * math.log(1 / 3)
    assert b["synthetic"]["entropy_l"] == pytest.approx(1.0)
    assert b["classes"][-1]["entropy_l"] == pytest.approx(math.exp(h_x))
    # the real table: x = [p, q] and w = [p, r] are 2-diverse, y = [q] is not: 1 of 5
    assert b["real"]["not_diverse_share"] == pytest.approx(1 / 5)
    assert b["real"]["distinct_l"] == 1
    assert result.records["class_l"].values.tolist() == [2, 2, 2, 1, 1, 1]
    # Wilson interval around 3 of 6
    assert result.ci is not None
    assert result.ci[0] < 0.5 < result.ci[1]


def test_entropy_and_recursive_l_diversity_by_hand() -> None:
    entropy = LDiversity(
        quasi_identifiers=["a"], sensitive=["s"], diversity="entropy"
    ).compute(REAL, SYN)
    # x's entropy l is 1.89 < 2 too: every synthetic record is in a class below 2
    assert entropy.score == pytest.approx(1.0)
    # recursive (2, 2): x = counts [2, 1]: 2 < 2 * 1 fails -> every class has l = 1
    recursive = LDiversity(
        quasi_identifiers=["a"], sensitive=["s"], diversity="recursive"
    ).compute(REAL, SYN)
    assert recursive.score == pytest.approx(1.0)
    # with c = 3, x is (3, 2)-diverse (2 < 3 * 1): only y and z fail
    loose = LDiversity(
        quasi_identifiers=["a"], sensitive=["s"], diversity="recursive", c=3.0
    ).compute(REAL, SYN)
    assert loose.score == pytest.approx(0.5)
    # an entropy exactly log(2) is 2-diverse (two values in equal shares)
    even = pd.DataFrame({"a": list("xxyy"), "s": list("pqpq")})
    assert LDiversity(
        quasi_identifiers=["a"], sensitive=["s"], diversity="entropy"
    ).compute(even, even).score == pytest.approx(0.0)


def test_t_closeness_by_hand() -> None:
    result = TCloseness(quasi_identifiers=["a"], sensitive=["s"]).compute(REAL, SYN)
    b = result.breakdown
    # total variation from (p 4/6, q 1/6, r 1/6): x (2/3, 1/3, 0) -> 1/6; y (1, 0, 0) -> 1/3;
    # z (0, 0, 1) -> 5/6
    assert b["t_distance"] == "equal"
    assert result.score == pytest.approx(5 / 6)
    assert result.records["class_distance"].values == pytest.approx(
        [1 / 6, 1 / 6, 1 / 6, 1 / 3, 1 / 3, 5 / 6]
    )
    assert b["synthetic"]["mean_distance"] == pytest.approx(2 / 6)
    # classes farther than t = 0.2: y and z, 3 of 6 records
    assert b["farther_share"] == pytest.approx(0.5)
    assert b["synthetic"]["n_classes_farther"] == 2
    assert [c["distance"] for c in b["classes"]] == pytest.approx([5 / 6, 1 / 3, 1 / 6])
    # the real table against its own (2/5, 2/5, 1/5): y = (0, 1, 0) -> 3/5 is the largest
    assert b["real"]["t"] == pytest.approx(3 / 5)


def test_t_closeness_ordered_distance_by_hand() -> None:
    syn = pd.DataFrame({"a": list("xxyy"), "s": [1.0, 2.0, 3.0, 3.0]})
    # table (1/4, 1/4, 1/2); x (1/2, 1/2, 0): cumulative differences 1/4, 1/2, 0 -> 3/4 / 2
    result = TCloseness(quasi_identifiers=["a"], sensitive=["s"]).compute(syn, syn)
    assert result.breakdown["t_distance"] == "ordered"
    assert result.score == pytest.approx(3 / 8)
    equal = TCloseness(
        quasi_identifiers=["a"], sensitive=["s"], t_distance="equal"
    ).compute(syn, syn)
    # total variation: x |1/2-1/4| + |1/2-1/4| + |0-1/2| = 1 -> 1/2
    assert equal.score == pytest.approx(0.5)


def test_found_by_name_and_run_without_parameters() -> None:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], 200),
            "band": rng.choice(["a", "b", "c"], 200),
            "age": rng.integers(20, 60, 200),
            "income": rng.choice(["<=50K", ">50K"], 200),
        }
    )
    report = evaluate(frame, frame.iloc[:150], metrics=["l_diversity", "t_closeness"])
    for metric_id in ("l_diversity", "t_closeness"):
        result = report[metric_id]
        assert result.params["quasi_identifiers"] == ["sex", "band", "age"]
        assert result.params["sensitive"] == ["income"]
        assert 0.0 <= result.score <= 1.0  # type: ignore[operator]


def test_parameters() -> None:
    with pytest.raises(ParameterError, match="`l` must be an integer >= 2"):
        LDiversity(l=1)
    with pytest.raises(ParameterError, match="`diversity` must be one of"):
        LDiversity(diversity="shannon")
    with pytest.raises(ParameterError, match="also quasi-identifiers"):
        TCloseness(quasi_identifiers=["a"], sensitive=["a"])
    with pytest.raises(ParameterError, match="`sensitive` must name at least one"):
        TCloseness(quasi_identifiers=["a"], sensitive=[])
    with pytest.raises(ParameterError, match=r"`t` must be a number in \(0, 1\]"):
        TCloseness(t=0)
