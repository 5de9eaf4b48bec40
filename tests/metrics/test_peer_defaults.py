# SPDX-License-Identifier: BSD-3-Clause
"""The peers' measures run without parameters: synthrisk's documented default columns.

Every measure of the disclosure and membership families runs on any table with no
parameter at all; the columns it used and the rule that chose them are in the result's
parameters (``columns_chosen_by``), and the choice is the same run after run.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthrisk import evaluate
from synthrisk.exceptions import ParameterError
from synthrisk.metrics import METRICS
from synthrisk.metrics.disclosure._defaults import (
    default_cap_columns,
    default_key_columns,
)
from synthrisk.schema.tables import prepare_tables

#: metric id -> the parameters that name its columns (empty: it uses every column)
PEERS: dict[str, tuple[str, ...]] = {
    "disclosure_protection": ("known_column_names", "sensitive_column_names"),
    "disclosure_protection_estimate": ("known_column_names", "sensitive_column_names"),
    "categorical_cap": ("key_fields", "sensitive_fields"),
    "categorical_zero_cap": ("key_fields", "sensitive_fields"),
    "categorical_generalized_cap": ("key_fields", "sensitive_fields"),
    "replicated_uniques": ("keys",),
    "disco": ("keys", "target"),
    "unique_exact_matches": ("columns",),
    "apparent_match_distribution": ("quasi_identifiers",),
    "k_anonymity": ("quasi_identifiers", "sensitive"),
    "l_diversity": ("quasi_identifiers", "sensitive"),
    "t_closeness": ("quasi_identifiers", "sensitive"),
    "epsilon_identifiability": ("columns",),
    "domias": ("columns",),
    "monte_carlo_membership": ("columns",),
    "collision_membership": ("columns",),
}

#: what the coarsest-columns rule picks on :func:`_table` (by hand: see the column comments)
EXPECTED_KEYS = ["sex", "region", "smoker"]
EXPECTED_SENSITIVE = "outcome"
USABLE = ["age", "sex", "region", "smoker", "score", "grade", "outcome"]
#: every usable column but the sensitive one (synthpop's disclosure() example, k-anonymity family)
ALL_BUT_SENSITIVE = USABLE[:-1]
#: the categorical and boolean columns but the sensitive one (CAP family, SDNist's generalisation)
CATEGORICAL = ["sex", "region", "smoker", "grade"]
#: metric id -> the keys its default rule picks on :func:`_table`
EXPECTED: dict[str, list[str]] = {
    "categorical_cap": CATEGORICAL,
    "categorical_zero_cap": CATEGORICAL,
    "categorical_generalized_cap": CATEGORICAL,
    "replicated_uniques": USABLE,  # synthpop's replicated.uniques: whole records
    "disco": ALL_BUT_SENSITIVE,
    "apparent_match_distribution": CATEGORICAL,
    "k_anonymity": ALL_BUT_SENSITIVE,
    "l_diversity": ALL_BUT_SENSITIVE,
    "t_closeness": ALL_BUT_SENSITIVE,
}


def _table(rng: np.random.Generator, n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "person_id": [
                f"P{i:05d}" for i in rng.permutation(10 * n)[:n]
            ],  # id: left out
            "age": rng.integers(18, 80, n),  # many values
            "sex": rng.choice(["F", "M"], n),  # 2 values
            "region": rng.choice(["N", "S", "W"], n),  # 3 values, before `score`
            "smoker": rng.choice([True, False], n),  # 2 values
            "score": rng.choice([1.0, 2.0, 3.0], n),  # 3 values, after `region`
            "grade": rng.choice(list("abcde"), n),  # 5 values
            "outcome": rng.choice(["low", "mid", "high"], n),  # the last categorical
        }
    )


@pytest.fixture(scope="module")
def tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(3)
    real, holdout = _table(rng, 300), _table(rng, 200)
    synthetic = pd.concat([_table(rng, 250), real.iloc[:50]], ignore_index=True)
    return real, synthetic, holdout


METADATA = {"columns": {"person_id": {"sdtype": "id"}}}


def _chosen(params: dict[str, object], names: tuple[str, ...]) -> dict[str, object]:
    return {name: params[name] for name in names}


@pytest.mark.parametrize("metric_id", sorted(PEERS))
def test_runs_without_parameters_and_records_its_columns(
    metric_id: str, tables: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]
) -> None:
    real, synthetic, holdout = tables
    options = {"domias": {"max_fit_rows": 100}}.get(metric_id)
    first = evaluate(
        real, synthetic, holdout, metadata=METADATA, metrics={metric_id: options}
    )[metric_id]
    # it ran (undefined only with its reason: no apparent match on coarse keys)
    assert first.status == "ok" or (first.status == "undefined" and first.reason)
    params = first.params
    assert str(params["columns_chosen_by"]).startswith(
        ("synthrisk's default", "synthpop's default")
    )
    chosen = _chosen(params, PEERS[metric_id])
    if "columns" in chosen:  # every usable column: the id column is left out
        assert chosen == {"columns": USABLE}
    elif metric_id.startswith("disclosure_protection"):  # numbers binned: same here
        assert chosen == {
            "known_column_names": EXPECTED_KEYS,
            "sensitive_column_names": [EXPECTED_SENSITIVE],
        }
    else:
        keys, *sensitive = PEERS[metric_id]
        assert chosen[keys] == EXPECTED[metric_id]
        if sensitive:
            value = chosen[sensitive[0]]
            target = value if isinstance(value, str) else value[0]  # type: ignore[index]
            assert target == EXPECTED_SENSITIVE
    # deterministic: the same tables give the same choice and the same JSON
    again = evaluate(
        real, synthetic, holdout, metadata=METADATA, metrics={metric_id: options}
    )[metric_id]
    assert again.params == params
    assert json.dumps(again.to_dict()["breakdown"], sort_keys=True) == json.dumps(
        first.to_dict()["breakdown"], sort_keys=True
    )


@pytest.mark.parametrize(
    "metric_id",
    sorted(m for m, names in PEERS.items() if "columns" not in names),
)
def test_default_run_equals_the_run_with_the_chosen_columns(
    metric_id: str, tables: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]
) -> None:
    real, synthetic, holdout = tables
    default = evaluate(real, synthetic, holdout, metadata=METADATA, metrics=[metric_id])
    params = dict(default[metric_id].params)
    params.pop("columns_chosen_by")
    explicit = evaluate(
        real, synthetic, holdout, metadata=METADATA, metrics={metric_id: params}
    )
    assert explicit[metric_id].score == default[metric_id].score
    assert explicit[metric_id].breakdown == default[metric_id].breakdown
    assert "columns_chosen_by" not in explicit[metric_id].params


def test_default_rule_by_hand(
    tables: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame],
) -> None:
    real, synthetic, _ = tables
    t = prepare_tables(real, synthetic, metadata=METADATA)
    keys, sensitive = default_key_columns(
        t, keys=None, sensitive=None, metric="m", hint="name them"
    )
    assert (keys, sensitive) == (EXPECTED_KEYS, [EXPECTED_SENSITIVE])
    # given keys: the sensitive column is the last categorical one outside them
    assert default_key_columns(
        t, keys=["outcome"], sensitive=None, metric="m", hint="h"
    ) == (["outcome"], ["grade"])
    # given sensitive: the keys leave it out
    assert default_key_columns(
        t, keys=None, sensitive=["sex"], metric="m", hint="h"
    ) == (["region", "smoker", "score"], ["sex"])
    assert default_key_columns(
        t, keys=None, sensitive=None, metric="m", hint="h", exclude=["sex"]
    ) == (["region", "smoker", "score"], [EXPECTED_SENSITIVE])


def test_exact_rule_counts_numbers_exactly_and_the_cap_rule_bins_them() -> None:
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame(
        {
            "a": rng.choice(["u", "v"], n),
            "b": rng.choice(list("xyz"), n),
            "n": rng.integers(0, 12, n).astype(float),  # 12 values, 10 once binned
            "c": rng.choice(list("abcdefghijk"), n),  # 11 values
            "s": rng.choice(["p", "q"], n),
        }
    )
    t = prepare_tables(frame, frame)
    assert default_key_columns(t, keys=None, sensitive=None, metric="m", hint="h") == (
        ["a", "b", "c"],
        ["s"],
    )
    assert default_cap_columns(t) == (["a", "b", "n"], ["s"], ["n"])


def test_too_few_columns_is_a_clear_error() -> None:
    frame = pd.DataFrame({"only": list("abcabc")})
    with pytest.raises(ParameterError, match=r"metric 'disco' .*name them with `keys`"):
        evaluate(frame, frame, metrics=["disco"])


def test_partial_choice_keeps_what_is_given(
    tables: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame],
) -> None:
    real, synthetic, _ = tables
    report = evaluate(
        real,
        synthetic,
        metadata=METADATA,
        metrics={
            "disco": {"keys": ["age", "sex"]},
            "l_diversity": {"sensitive": "sex"},
        },
    )
    disco = report["disco"].params
    assert (disco["keys"], disco["target"]) == (["age", "sex"], "outcome")
    assert "`target` = the last categorical column outside the given keys" in str(
        disco["columns_chosen_by"]
    )
    assert "`keys`" not in str(disco["columns_chosen_by"])
    diversity = report["l_diversity"].params
    assert diversity["quasi_identifiers"] == [
        "age",
        "region",
        "smoker",
        "score",
        "grade",
        "outcome",
    ]
    assert diversity["sensitive"] == ["sex"]
    # k_anonymity with its quasi-identifiers given keeps no sensitive column
    k = evaluate(
        real, synthetic, metrics={"k_anonymity": {"quasi_identifiers": ["sex"]}}
    )["k_anonymity"]
    assert k.params["sensitive"] == []
    assert "columns_chosen_by" not in k.params


def test_coarse_default_keys_that_single_out_nobody_say_so() -> None:
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], 500),
            "band": rng.choice(["lo", "hi"], 500),
            "age": rng.integers(18, 90, 500),
            "outcome": rng.choice(["a", "b"], 500),
        }
    )
    report = evaluate(
        frame,
        frame,
        metrics=["replicated_uniques", "apparent_match_distribution"],
    )
    rep = report["replicated_uniques"]
    assert rep.params["keys"] == ["sex", "band", "age", "outcome"]  # whole records
    assert rep.score is not None
    assert rep.score > 0
    coarse = frame[["sex", "band", "outcome"]]  # 8 combinations: nobody is unique
    report = evaluate(
        coarse, coarse, metrics=["replicated_uniques", "apparent_match_distribution"]
    )
    assert report["replicated_uniques"].score == 0.0
    assert any("singles out nobody" in w for w in report["replicated_uniques"].warnings)
    amd = report["apparent_match_distribution"]
    assert amd.score is None
    assert any("give no apparent match" in w for w in amd.warnings)


def test_every_registered_metric_builds_without_parameters() -> None:
    # none of them needs a parameter to be built (the columns are chosen per table)
    for metric_id, cls in METRICS.items():
        assert cls.from_params({}).id == metric_id


def test_apparent_matches_use_sdnist_quasi_identifiers_where_the_table_has_them() -> (
    None
):
    rng = np.random.default_rng(2)
    n = 300
    frame = pd.DataFrame(
        {
            "SEX": rng.choice(["1", "2"], n),
            "AGEP": rng.integers(18, 90, n),
            "EDU": rng.choice(list("123456"), n),
            "PUMA": rng.choice(["a", "b", "c", "d"], n),
            "DVET": rng.choice(["1", "2", "3"], n),
            "PINCP": rng.normal(40000, 9000, n).round(),
        }
    )
    result = evaluate(frame, frame, metrics=["apparent_match_distribution"])[
        "apparent_match_distribution"
    ]
    assert result.params["quasi_identifiers"] == ["SEX", "EDU", "PUMA"]
    assert str(result.params["columns_chosen_by"]).startswith("SDNist's default")
    assert result.breakdown["compared_columns"] == ["AGEP", "DVET", "PINCP"]
