# SPDX-License-Identifier: BSD-3-Clause
"""``sdc_risk``: sdcMicro's individual risk and SUDA, against sdcMicro's published examples."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from synthrisk.exceptions import ParameterError
from synthrisk.metrics import SdcRisk
from synthrisk.metrics.disclosure._sdc import (
    _max_msu,
    individual_risk,
    suda_scores,
    suda_weights,
)

# sdcMicro tests/testthat/test_indivRisk.R: keys A, B, C and sampling weights
INDIV = pd.DataFrame(
    {
        "A": [2, 3, 2, 2, 3, 3, 1, 2],
        "B": [3, 3, 3, 3, 3, 3, 4, 3],
        "C": [1, 3, 1, 2, 1, 1, 1, 1],
        "weight": [18.0, 45.5, 39.0, 17.0, 92.0, 8.0, 123.5, 51.0],
    }
)
#: indivRisk(freqCalc(..., w=4), method="approx"), as published by sdcMicro's tests
INDIV_RISK = [
    0.01369863,
    0.08579129,
    0.01369863,
    0.17707583,
    0.01877883,
    0.01877883,
    0.03931625,
    0.01369863,
]

# the example of Templ (2017), "Statistical Disclosure Control for Microdata", SUDA
BOOK = pd.DataFrame(
    {
        "age": ["20s"] * 7 + ["60s"],
        "gender": ["male"] * 4 + ["female"] * 3 + ["male"],
        "income": ["50k+", "50k+"] + ["50k-"] * 6,
        "education": ["highschool"] * 4
        + ["university", "highschool", "middleschool", "university"],
    }
)
# the example of the SDC practice guide (Benschop, Machingauta, Welch; IHSN)
GUIDE = pd.DataFrame(
    {
        "Residence": ["Urban"] * 4 + ["Rural"] + ["Urban"] * 5,
        "Gender": [
            "Female",
            "Female",
            "Female",
            "Male",
            "Female",
            "Male",
            "Female",
            "Male",
            "Female",
            "Female",
        ],
        "Education": [
            "Secondary incomplete",
            "Secondary incomplete",
            "Primary incomplete",
            "Secondary complete",
            "Secondary complete",
            "Secondary complete",
            "Primary complete",
            "Post-secondary",
            "Secondary incomplete",
            "Secondary incomplete",
        ],
        "Labor": [
            "Employed",
            "Employed",
            "Non-LF",
            "Employed",
            "Unemployed",
            "Employed",
            "Non-LF",
            "Unemployed",
            "Non-LF",
            "Non-LF",
        ],
    }
)


def _codes(frame: pd.DataFrame) -> np.ndarray:
    return np.column_stack([pd.factorize(frame[c])[0] for c in frame])


def test_individual_risk_reproduces_sdcmicro_indivrisk() -> None:
    # classes: (2,3,1) rows 1, 3, 8: f = 3, F = 18 + 39 + 51 = 108; (3,3,1) rows 5, 6:
    # f = 2, F = 100; the others unique, F = their weight
    fk = np.array([3, 1, 3, 1, 2, 2, 1, 3])
    big_fk = np.array([108, 45.5, 108, 17, 100, 100, 123.5, 108])
    np.testing.assert_allclose(individual_risk(fk, big_fk), INDIV_RISK, atol=5e-9)


def test_sdc_risk_with_weights_reproduces_sdcmicro() -> None:
    result = SdcRisk(columns=["A", "B", "C"], weights="weight").compute(INDIV, INDIV)
    real = result.breakdown["individual_risk"]["real"]
    assert real["global_risk"] == pytest.approx(np.mean(INDIV_RISK), abs=1e-8)
    assert real["expected_reidentifications"] == pytest.approx(
        sum(INDIV_RISK), abs=1e-7
    )
    assert real["highest"] == pytest.approx(0.17707583)
    # above 0.09: only row 4 (0.177)
    assert real["records_at_risk"] == pytest.approx(1 / 8)
    assert result.breakdown["individual_risk"]["population_size"] == 394.0


def test_sdc_risk_without_weights_is_one_over_fk() -> None:
    # sdcMicro's indivRisk(survey=FALSE): 1 / f_k
    result = SdcRisk(columns=["A", "B", "C"]).compute(INDIV, INDIV)
    want = [1 / 3, 1, 1 / 3, 1, 1 / 2, 1 / 2, 1, 1 / 3]
    np.testing.assert_allclose(result.records["individual_risk"].values, want)
    assert result.score == pytest.approx(np.mean(want))  # 5 classes / 8 records
    assert result.breakdown["individual_risk"]["real"]["global_risk"] == pytest.approx(
        5 / 8
    )


def test_individual_risk_with_a_sampling_fraction_by_hand() -> None:
    # half the population sampled: F = 2 f, p = 1/2 for every class
    # f = 1: 1 · log 2; f = 2: 1 - 1 · log 2; f = 3: 0.5 / (3 - 0.5) = 0.2
    got = individual_risk(np.array([1, 2, 3]), np.array([2.0, 4.0, 6.0]))
    np.testing.assert_allclose(got, [math.log(2), 1 - math.log(2), 0.2])


def test_suda_reproduces_the_book_example() -> None:
    # sdcMicro's test_suda2 "book example": scores of rows 5 to 8 are 4, 2, 6, 8;
    # rows 1-4 are duplicated on every key: no MSU
    got = suda_scores(_codes(BOOK), max_msu=4)
    np.testing.assert_array_equal(got.score, [0, 0, 0, 0, 4, 2, 6, 8])
    # row 8 (60s, male, 50k-, university): {60s} (size 1, weight 3! = 6) and
    # {male, university} (size 2, weight 2! = 2)
    assert got.msu_counts[7].tolist() == [1, 1, 0, 0]


def test_suda_reproduces_the_sdc_guideline_example() -> None:
    got = suda_scores(_codes(GUIDE), max_msu=4)
    np.testing.assert_array_equal(got.score, [0, 0, 6, 0, 12, 0, 6, 10, 0, 0])


def test_sdc_risk_suda_through_the_metric() -> None:
    result = SdcRisk(columns=list(GUIDE.columns)).compute(GUIDE, GUIDE)
    np.testing.assert_array_equal(
        result.records["suda_score"].values, [0, 0, 6, 0, 12, 0, 6, 10, 0, 0]
    )
    suda = result.breakdown["suda"]
    assert suda["max_msu"] == 4  # every size, as sdcMicro's suda2
    assert suda["synthetic"]["highest_score"] == 12
    assert suda["synthetic"]["mean_score"] == pytest.approx(3.4)
    assert suda["synthetic"]["share_with_msu"] == pytest.approx(0.4)
    assert suda["real"] == suda["synthetic"]


def test_suda_two_columns_by_hand() -> None:
    # rows (x,p) (x,p) (x,q) (y,q) (y,q) (z,p); sdcMicro pads 2 keys to 3: ATT = 3
    codes = _codes(pd.DataFrame({"a": list("xxxyyz"), "b": list("ppqqqp")}))
    got = suda_scores(codes, max_msu=2)
    # row 6: {z} unique (size 1, weight (3-1)! = 2); row 3: {x, q} unique while {x}
    # (3 rows) and {q} (3 rows) are not (size 2, weight 1); {z, p} is not minimal
    np.testing.assert_array_equal(got.score, [0, 0, 1, 0, 0, 2])
    # DIS-SUDA: U = 2 uniques on both keys (rows 3, 6), P = 4 rows in pairs;
    # Dis = 2·0.01 / (2·0.01 + 4·0.99); Q = 1 + (8 - 3) / 20 = 1.25;
    # A = 1^-1.25 + 2^-1.25; DIS = 1 / (1 + (U / Dis - U) / (score^Q · A))
    dis = 0.02 / (0.02 + 3.96)
    a = 1.0 + 2.0**-1.25
    k = 2 / dis - 2  # = 396
    want = [0, 0, 1 / (1 + k / a), 0, 0, 1 / (1 + k / (2.0**1.25 * a))]
    np.testing.assert_allclose(got.dis_score, want)


def test_suda_weights() -> None:
    # every size searched: (ATT - k)!
    np.testing.assert_array_equal(suda_weights(4, 4), [6, 2, 1, 1])
    # Elliot et al. with M = 2 of 5 attributes: prod_{i=k}^{2} (5 - i)
    np.testing.assert_array_equal(suda_weights(5, 2), [4 * 3, 3])


def test_max_msu_default() -> None:
    assert _max_msu(None, 4) == 4
    assert _max_msu(None, 11) == 3
    assert _max_msu(2, 4) == 2
    assert _max_msu(9, 4) == 4


def test_sdc_risk_compares_release_with_real() -> None:
    # the synthetic table repeats one rare real record 3 times and adds uniques
    real = GUIDE
    synthetic = pd.concat([GUIDE.iloc[[0, 1, 3]]] * 3 + [GUIDE.iloc[[4]]])
    result = SdcRisk(columns=list(GUIDE.columns)).compute(real, synthetic)
    b = result.breakdown["individual_risk"]
    assert set(b) >= {"synthetic", "real", "population_size", "weights"}
    assert result.params["columns_chosen_by"] == "`columns`"


def test_sdc_risk_rejects_bad_parameters() -> None:
    with pytest.raises(ParameterError, match="not both"):
        SdcRisk(weights="weight", sampling_fraction=0.5)
    with pytest.raises(ParameterError, match="positive numbers"):
        SdcRisk(columns=["A"], weights="C").compute(
            INDIV.assign(C=[0, 1, 1, 1, 1, 1, 1, 1]), INDIV
        )
    with pytest.raises(ParameterError, match="weights"):
        SdcRisk(weights=3)
