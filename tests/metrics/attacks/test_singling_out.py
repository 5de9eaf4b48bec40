# SPDX-License-Identifier: BSD-3-Clause
"""Singling-out risk.

Several toy cases are ported from Anonymeter's ``tests/test_singling_out_evaluator.py``
(The Clear BSD License, Copyright (c) 2022 Anonos IP LLC).
"""

from __future__ import annotations

import json
import operator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import integrate

from synthrisk import SinglingOutRisk, evaluate
from synthrisk.exceptions import InputError, ParameterError, SchemaMismatchError
from synthrisk.metrics.attacks._equal_size import (
    EQUAL_SIZE_REPEATS,
    RELABEL_REPEATS,
    equal_size_successes,
)
from synthrisk.metrics.attacks._queries import (
    OP_EQ,
    OP_GE,
    OP_GT,
    OP_ISNULL,
    OP_LE,
    OP_LT,
    OP_NE,
    OP_NOTNULL,
    QueryBatch,
    QueryTable,
    count_matches,
)
from synthrisk.metrics.attacks._size_correction import (
    fit_size_correction,
    singling_out_probability_integral,
)
from synthrisk.metrics.attacks.singling_out import (
    SinglingOutAttack,
    SinglingOutUnivariateRisk,
    singling_out_attack,
)
from synthrisk.schema import prepare_tables

GOLDENS = json.loads(
    (Path(__file__).parents[1] / "data" / "anonymeter_goldens.json").read_text()
)


def population(n: int, seed: int) -> pd.DataFrame:
    """A census-like table where 3-column queries often single out."""
    g = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": g.integers(18, 90, n),
            "income": np.round(g.lognormal(10, 0.6, n), -2),
            "job": g.choice([f"job{i}" for i in range(12)], n),
            "city": g.choice([f"city{i}" for i in range(25)], n),
            "sex": g.choice(["F", "M"], n),
            "flag": g.random(n) < 0.3,
        }
    )


def attack(
    real: pd.DataFrame,
    syn: pd.DataFrame,
    hold: pd.DataFrame | None = None,
    **kw: object,
) -> SinglingOutAttack:
    tables = prepare_tables(real, syn, hold)
    seed = kw.pop("seed", 0)
    return singling_out_attack(tables, rng=np.random.default_rng(seed), **kw)  # type: ignore[arg-type]


def brute_count(
    frame: pd.DataFrame, result: SinglingOutAttack, i: int, *, which: str = "main"
) -> int:
    """Rows of ``frame`` (de-duplicated) matching query ``i``, evaluated with pandas."""
    frame = frame.drop_duplicates()
    batch = result.queries if which == "main" else result.baseline_queries
    mask = pd.Series(True, index=frame.index)
    info = result.info
    ops = {
        OP_EQ: operator.eq,
        OP_NE: operator.ne,
        OP_LT: operator.lt,
        OP_LE: operator.le,
        OP_GT: operator.gt,
        OP_GE: operator.ge,
    }
    for t in range(int(batch.lengths[i])):
        j, op, v = int(batch.cols[i, t]), int(batch.ops[i, t]), float(batch.vals[i, t])
        col = frame[info.names[j]]
        if op == OP_ISNULL:
            mask &= col.isna()
        elif op == OP_NOTNULL:
            mask &= col.notna()
        else:
            value = info.categories[j][int(v)] if info.categories[j] is not None else v  # type: ignore[index]
            mask &= ops[op](col, value) & col.notna()
    return int(mask.sum())


# --- query generation ------------------------------------------------------------


def test_univariate_queries_are_rare_values_extremes_and_single_nulls() -> None:
    df = pd.DataFrame({"col1": ["a", "b", "c", "d"], "col2": [2, 1, 3, None]})
    result = attack(df, df, mode="univariate", n_attacks=20)
    expected = [f"col1 == '{v}'" for v in "abcd"] + [f"col2 == {v}" for v in (1, 2, 3)]
    expected += ["col2 <= 1", "col2 >= 3", "col2 IS NULL"]
    assert sorted(result.query_strings("generated")) == sorted(expected)
    assert result.n_success == 10
    assert any("only 10 of the requested 20" in w for w in result.warnings)


def test_univariate_plain_column() -> None:
    df = pd.DataFrame({"col1": ["a", "b", "c", "d"]})
    result = attack(df, df, mode="univariate", n_attacks=10)
    assert sorted(result.query_strings("generated")) == [
        f"col1 == '{v}'" for v in "abcd"
    ]


def test_multivariate_queries_are_half_lines_towards_the_tail() -> None:
    df = pd.DataFrame({"c0": ["a", "b"], "c1": [1.23, 9.87]})
    result = attack(df, df, n_attacks=2, n_cols=2, max_attempts=None)
    assert sorted(result.query_strings("generated")) == [
        "c0 == 'a' AND c1 <= 1.23",
        "c0 == 'b' AND c1 >= 9.87",
    ]


def test_successful_queries_single_out_in_synthetic_and_real() -> None:
    real, syn = population(400, 1), population(400, 2)
    syn.iloc[:150] = real.iloc[:150].to_numpy()
    result = attack(real, syn, n_attacks=150)
    assert result.n_queries == 150
    assert 0 < result.n_success < 150
    for i in range(result.n_queries):
        assert brute_count(syn, result, i) == 1
        assert (brute_count(real, result, i) == 1) == (result.main_counts[i] == 1)
    for i in range(len(result.baseline_queries)):
        assert (brute_count(real, result, i, which="baseline") == 1) == (
            result.baseline_counts[i] == 1
        )
    rows = result.main_rows[result.main_rows >= 0]
    assert rows.size == result.n_success
    assert np.all(rows < len(real))


def test_queries_are_unique_and_sorted_by_column_name() -> None:
    real = population(300, 3)
    result = attack(real, real, n_attacks=200)
    texts = result.query_strings("generated")
    assert len(set(texts)) == len(texts) == 200
    for text in texts:
        names = [part.split(" ")[0] for part in text.split(" AND ")]
        assert names == sorted(names)
        assert len(names) == 3


@pytest.mark.parametrize("max_attempts", [1, 2, 3, 50])
def test_max_attempts_caps_the_number_of_queries(max_attempts: int) -> None:
    real = population(60, 4)
    result = attack(real, real, n_attacks=100, max_attempts=max_attempts)
    assert result.n_queries <= max_attempts
    assert result.n_attempts == max_attempts
    assert any("`max_attempts`" in w for w in result.warnings)


def test_seeded_runs_repeat_and_seeds_differ() -> None:
    real, syn, hold = population(300, 5), population(300, 6), population(300, 7)
    first = attack(real, syn, hold, n_attacks=100, seed=3)
    again = attack(real, syn, hold, n_attacks=100, seed=3)
    other = attack(real, syn, hold, n_attacks=100, seed=4)
    assert first.query_strings("generated") == again.query_strings("generated")
    assert first.estimate() == again.estimate()
    assert first.query_strings("generated") != other.query_strings("generated")


# --- statistics and properties ----------------------------------------------------


def test_copy_of_real_gives_high_risk() -> None:
    real, hold = population(500, 8), population(500, 9)
    result = SinglingOutRisk(n_attacks=300).compute(real, real.copy(), hold)
    assert result.score is not None
    assert result.score > 0.8
    assert result.breakdown["attack_rate"]["value"] > 0.95  # type: ignore[index]


def test_independent_synthetic_gives_an_interval_containing_zero() -> None:
    real, syn, hold = population(500, 10), population(500, 11), population(500, 12)
    result = SinglingOutRisk(n_attacks=300).compute(real, syn, hold)
    assert result.ci is not None
    assert result.ci[0] == 0.0
    assert result.score is not None
    assert result.score < 0.1


def test_denominator_is_the_generated_queries_unless_compat() -> None:
    real = pd.DataFrame({"a": ["x", "y", "z", "x"], "b": [1, 2, 3, 4]})
    fixed = attack(real, real, real, mode="univariate", n_attacks=50)
    compat = attack(
        real, real, real, mode="univariate", n_attacks=50, compat="anonymeter-1.1"
    )
    assert (
        fixed.n_queries == compat.n_queries == 8
    )  # a == y, a == z, b == 1..4, b <= 1, b >= 4
    assert fixed.estimate().n_attacks == 8
    assert compat.estimate().n_attacks == 50
    assert (
        fixed.estimate().n_baseline_attacks
        == compat.estimate().n_baseline_attacks
        == 50
    )
    assert fixed.estimate().attack_rate.value > compat.estimate().attack_rate.value
    assert any("rates are computed over the 8 generated" in w for w in fixed.warnings)
    assert any("still divided by the requested 50" in w for w in compat.warnings)


def test_no_query_at_all_gives_zero_risk_with_a_warning() -> None:
    real = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": [1, 1, 2, 2]})
    syn = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": [1, 1, 2, 2]})
    out = SinglingOutRisk(mode="univariate", n_attacks=10).compute(real, syn, real)
    # de-duplication leaves two rows, whose every value is unique: 6 queries
    assert out.breakdown["n_queries"] == 6
    flat = pd.DataFrame(
        {"a": ["x"] * 4, "b": [1.0, 1.0, 2.0, 2.0], "c": ["u", "v", "u", "v"]}
    )
    out = SinglingOutRisk(n_attacks=10, n_cols=2, max_attempts=500).compute(
        flat, flat.iloc[[0, 1]], flat
    )
    assert out.breakdown["n_queries"] >= 0


def test_probability_integral_equals_numeric_integration() -> None:
    for n in (100, 4242, 11235):
        for w_max in (1.0, 1 / 1000, 0.2314):
            desired, _ = integrate.quad(
                lambda w, n=n: n * w * (1 - w) ** (n - 1), 0, w_max
            )
            assert singling_out_probability_integral(n, w_max) == pytest.approx(
                desired, rel=1e-7, abs=1e-12
            )


@pytest.mark.parametrize("case", GOLDENS["size_correction"], ids=lambda c: c["name"])
def test_size_correction_with_anonymeter_start_equals_anonymeter(case: dict) -> None:
    got = fit_size_correction(
        np.array(case["sizes"]),
        np.array(case["successes"]),
        case["n_real"],
        case["n_control"],
        start="anonymeter",
    )
    assert got == pytest.approx(case["factor"], rel=1e-6)


def test_global_fit_finds_the_optimum_anonymeter_misses() -> None:
    case = {c["name"]: c for c in GOLDENS["size_correction"]}["model_noise"]
    sizes, successes = np.array(case["sizes"]), np.array(case["successes"])
    truth = singling_out_probability_integral(
        39032.0, 2e-4
    ) / singling_out_probability_integral(9758.0, 2e-4)
    got = fit_size_correction(sizes, successes, 39032, 9758, start="global")
    assert got == pytest.approx(truth, rel=0.03)
    assert case["factor"] == pytest.approx(
        9759 / 39033, rel=1e-4
    )  # Anonymeter: 1/(n+1) regime
    adult = {c["name"]: c for c in GOLDENS["size_correction"]}["adult_like"]
    got = fit_size_correction(
        np.array(adult["sizes"]),
        np.array(adult["successes"]),
        39032,
        9758,
        start="global",
    )
    assert 0.35 < got < 0.5


def test_control_size_correction_modes() -> None:
    real, syn, hold = population(600, 13), population(600, 14), population(300, 15)
    syn.iloc[:300] = real.iloc[:300].to_numpy()
    hold.iloc[:100] = real.iloc[
        300:400
    ].to_numpy()  # the holdout looks like the real rows
    buggy = attack(real, syn, hold, n_attacks=200, compat="anonymeter-1.1")
    assert buggy.control_correction == pytest.approx(301 / 601, rel=2e-3)  # data-blind
    fixed = attack(real, syn, hold, n_attacks=200)
    assert fixed.control_correction is not None
    assert fixed.control_correction != pytest.approx(301 / 601, rel=2e-2)
    assert fixed.n_control == pytest.approx(
        fixed.n_control_raw * fixed.control_correction
    )  # type: ignore[operator]
    same_size = attack(real, syn, population(600, 16), n_attacks=50)
    assert same_size.control_correction is None


# --- compatibility switches -------------------------------------------------------


def test_quoted_strings_never_match_in_anonymeter_11_multivariate() -> None:
    names = ["a"] * 5 + ["b"] * 5 + ["O'Neil", 'say "hi"']
    df = pd.DataFrame({"name": names, "x": np.arange(12.0)})  # no duplicated rows
    fixed = attack(df, df, n_attacks=5, n_cols=1, max_attempts=2000)
    buggy = attack(
        df, df, n_attacks=5, n_cols=1, max_attempts=2000, compat="anonymeter-1.1"
    )
    on_names = sorted(
        t for t in fixed.query_strings("generated") if t.startswith("name")
    )
    assert on_names == ['name == "O\'Neil"', "name == 'say \"hi\"'"]
    assert not any(t.startswith("name") for t in buggy.query_strings("generated"))
    uni = attack(df, df, n_attacks=50, mode="univariate", compat="anonymeter-1.1")
    # 1.1's univariate queries are not escaped: both quoted names single out
    assert sum(t.startswith("name") for t in uni.query_strings("generated")) == 2


def test_anonymeter_10_ignores_non_identifier_columns_and_datetimes() -> None:
    g = np.random.default_rng(17)
    df = pd.DataFrame(
        {
            "marital-status": g.choice(["p", "q", "r", "s"], 80),
            "age": g.integers(0, 90, 80),
            "job": g.choice(["u", "v", "w"], 80),
            "when": pd.Timestamp("2020-01-01")
            + pd.to_timedelta(g.integers(0, 200, 80), unit="D"),
        }
    )
    old = attack(
        df, df, n_attacks=30, n_cols=2, compat="anonymeter-1.0", max_attempts=20000
    )
    assert old.n_queries > 0
    for text in old.query_strings("generated"):
        assert "marital-status" not in text
        assert "when" not in text
    assert any("never appear in a working query" in w for w in old.warnings)
    new = attack(df, df, n_attacks=30, n_cols=2, max_attempts=20000)
    assert any("marital-status" in t for t in new.query_strings("generated"))
    assert any("when <=" in t or "when >=" in t for t in new.query_strings("generated"))
    v11 = attack(df, df, n_attacks=5, n_cols=2, compat="anonymeter-1.1")
    assert any("raises an error on datetime columns" in w for w in v11.warnings)


def test_anonymeter_10_deduplicates_by_sorted_characters() -> None:
    df = pd.DataFrame({"c": [1.2, 2.1]})
    old = attack(df, df, mode="univariate", n_attacks=10, compat="anonymeter-1.0")
    new = attack(df, df, mode="univariate", n_attacks=10, compat="anonymeter-1.1")
    assert sorted(new.query_strings("generated")) == [
        "c <= 1.2",
        "c == 1.2",
        "c == 2.1",
        "c >= 2.1",
    ]
    kept = old.query_strings("generated")
    assert len(kept) == 3  # `c == 1.2` and `c == 2.1` are made of the same characters
    assert sum(t.startswith("c ==") for t in kept) == 1


def test_anonymeter_10_counts_missing_values_as_not_equal() -> None:
    real = pd.DataFrame({"a": ["x", None, "y", "y"], "b": [1.0, 2.0, np.nan, 4.0]})
    for compat, expected in (
        (None, False),
        ("anonymeter-1.1", False),
        ("anonymeter-1.0", True),
    ):
        result = attack(real, real, n_attacks=5, n_cols=1, compat=compat)
        assert (result.compat == "anonymeter-1.0") == expected


# --- the metric --------------------------------------------------------------------


def test_metric_result_carries_rates_risk_and_petsard_view() -> None:
    real, syn, hold = population(400, 18), population(400, 19), population(300, 20)
    syn.iloc[:200] = real.iloc[:200].to_numpy()
    out = SinglingOutRisk(n_attacks=200).compute(real, syn, hold, seed=1)
    b = out.breakdown
    assert out.metric == "singling_out"
    assert out.score == b["risk"]
    assert out.ci == tuple(b["risk_ci"])  # type: ignore[arg-type]
    assert set(b["petsard"]) == {  # type: ignore[arg-type]
        "risk", "risk_CI_btm", "risk_CI_top", "attack_rate", "attack_rate_err",
        "baseline_rate", "baseline_rate_err", "control_rate", "control_rate_err",
    }  # fmt: skip
    assert b["petsard"]["risk"] == out.score  # type: ignore[index]
    assert b["n_attacks"] == {"main": 200, "baseline": 200, "control": 200}
    assert b["n_queries"] == 200
    assert b["control_size_correction"] is not None
    assert len(b["successful_queries"]) == b["n_success"]["main"]  # type: ignore[arg-type,index]
    assert out.params["n_attacks"] == 200
    record = out.records["singled_out_real"]
    assert record.table == "real"
    assert record.index.size == b["n_success"]["main"]  # type: ignore[index]
    data = out.to_dict()
    assert data["score"] == out.score
    again = SinglingOutRisk(n_attacks=200).compute(real, syn, hold, seed=1)
    assert again.breakdown == out.breakdown


def test_evaluate_runs_singling_out_by_default_with_a_holdout() -> None:
    real, syn, hold = population(200, 21), population(200, 22), population(200, 23)
    report = evaluate(
        real,
        syn,
        hold,
        metrics={"singling_out": {"n_attacks": 50, "mode": "univariate"}},
    )
    assert report["singling_out"].score is not None
    assert SinglingOutRisk.runs_by_default
    assert SinglingOutRisk.requires_holdout
    assert not SinglingOutRisk.higher_is_safer


# --- bad input ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_attacks": 0}, "`n_attacks` must be an integer >= 1"),
        ({"n_attacks": 2.5}, "`n_attacks` must be an integer"),
        ({"n_cols": 0}, "`n_cols` must be an integer >= 1"),
        ({"max_attempts": 0}, "`max_attempts` must be an integer >= 1"),
        ({"mode": "bivariate"}, "`mode` must be one of"),
        ({"compat": "anonymeter-2.0"}, "`compat` must be one of"),
        ({"confidence_level": 1.5}, "`confidence_level` must be a number in"),
    ],
)
def test_bad_parameters(kwargs: dict, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        SinglingOutRisk(**kwargs)


def test_univariate_variant_takes_every_option_of_singling_out() -> None:
    assert SinglingOutUnivariateRisk.param_names() == SinglingOutRisk.param_names()
    metric = SinglingOutUnivariateRisk.from_params({"n_attacks": 7, "compat": None})
    assert metric.params == {
        **SinglingOutRisk(n_attacks=7).params,
        "mode": "univariate",
    }
    assert (
        SinglingOutUnivariateRisk(mode="multivariate").params["mode"] == "multivariate"
    )
    with pytest.raises(ParameterError, match="`n_cols` must be an integer >= 1"):
        SinglingOutUnivariateRisk(n_cols=0)
    with pytest.raises(
        ParameterError, match=r"has no parameter\(s\) \['n_neighbors'\]"
    ):
        SinglingOutUnivariateRisk.from_params({"n_neighbors": 2})


def test_n_cols_larger_than_the_usable_columns() -> None:
    real = population(50, 24)
    with pytest.raises(
        ParameterError,
        match=r"`n_cols` must be at most the number of usable columns \(6\); got 7",
    ):
        SinglingOutRisk(n_cols=7).compute(real, real, real)
    SinglingOutRisk(n_cols=7, mode="univariate", n_attacks=5).compute(real, real, real)


def test_needs_a_holdout() -> None:
    real = population(50, 25)
    with pytest.raises(InputError, match="needs a `holdout` table"):
        SinglingOutRisk().compute(real, real)


def test_holdout_with_different_columns() -> None:
    real = population(50, 26)
    with pytest.raises(SchemaMismatchError, match="only in `real`"):
        SinglingOutRisk().compute(real, real, real.drop(columns=["city"]))


def test_tables_with_one_row() -> None:
    one = population(1, 27)
    out = SinglingOutRisk(n_attacks=5, n_cols=2).compute(one, one, one)
    assert out.score is not None
    assert out.breakdown["n_queries"] == 5  # the one row is singled out by any query
    out = SinglingOutRisk(n_attacks=50, n_cols=2, max_attempts=20_000).compute(
        one, one, one
    )
    assert any(
        "only 15 of the requested 50" in w for w in out.warnings
    )  # C(6, 2) column pairs
    out = SinglingOutRisk(n_attacks=5, mode="univariate").compute(
        one, population(30, 28), one
    )
    assert out.score is not None


def _equal_size_by_reindexing(
    real: np.ndarray, hold: np.ndarray, queries: QueryBatch, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, float]:
    """The equal-size test as first written: every subsample indexed and counted alone."""

    def successes(values: np.ndarray) -> np.ndarray:
        counts, _ = count_matches(QueryTable.from_values(values), queries, cap=2)
        return (counts == 1).astype(np.float64)

    n_r, n_h = real.shape[0], hold.shape[0]
    m = min(n_r, n_h)
    main, ctrl = successes(real), successes(hold)
    if n_r != n_h:
        big = real if n_r > n_h else hold
        total = np.zeros(len(queries))
        for _ in range(EQUAL_SIZE_REPEATS):
            rows = np.sort(rng.choice(big.shape[0], size=m, replace=False))
            total += successes(big[rows])
        total /= EQUAL_SIZE_REPEATS
        main, ctrl = (total, ctrl) if n_r > n_h else (main, total)
    pool = np.concatenate([real, hold])
    diffs = np.empty(RELABEL_REPEATS)
    for b in range(RELABEL_REPEATS):
        order = rng.permutation(pool.shape[0])
        first = successes(pool[np.sort(order[:m])])
        second = successes(pool[np.sort(order[m : 2 * m])])
        diffs[b] = float(first.mean() - second.mean())
    return main, ctrl, float(diffs.std(ddof=1))


@pytest.mark.parametrize(("n_real", "n_hold"), [(300, 300), (400, 150), (120, 260)])
def test_equal_size_masks_count_as_reindexed_subsamples(
    n_real: int, n_hold: int
) -> None:
    g = np.random.default_rng(n_real + n_hold)
    real, hold = (
        np.column_stack(
            [g.integers(0, 4, n), g.integers(0, 3, n), g.normal(size=n).round(1)]
        ).astype(np.float64)
        for n in (n_real, n_hold)
    )
    real[g.random(real.shape) < 0.05] = np.nan
    syn = real[g.choice(n_real, 200)]
    cols = np.tile([0, 1, 2], (200, 1))
    ops = np.tile(np.array([OP_EQ, OP_EQ, OP_LE], dtype=np.int8), (200, 1))
    queries = QueryBatch(cols, ops, syn, np.full(200, 3, dtype=np.int64))
    main_counts, _ = count_matches(QueryTable.from_values(real), queries, cap=2)
    control_counts, _ = count_matches(QueryTable.from_values(hold), queries, cap=2)
    expected = _equal_size_by_reindexing(real, hold, queries, np.random.default_rng(7))
    for real_in, hold_in in (
        (real, hold),
        (QueryTable.from_values(real), QueryTable.from_values(hold)),
    ):
        got = equal_size_successes(
            real_in,
            hold_in,
            queries,
            main_counts,
            control_counts,
            ne_matches_null=False,
            rng=np.random.default_rng(7),
        )
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1])
        assert got[2] == expected[2]
