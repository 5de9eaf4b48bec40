# SPDX-License-Identifier: BSD-3-Clause
"""Calls that mypy must reject, beside calls it must accept.

``test_wrong_calls.py`` runs mypy (strict, the project's settings) on this file: every
line that ends with ``# E: <code>`` must have a mypy error with that code, and no other
line may have one (those are the controls, written as users write them). pytest does not
collect this file, and nothing runs it.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from synthrisk import (
    NNDR,
    DisclosureProtection,
    InferenceRisk,
    LinkabilityRisk,
    SinglingOutRisk,
    evaluate,
)
from synthrisk._typing import JSONValue
from synthrisk._validation import check_int
from synthrisk.metrics import Context, Metric, Outcome, get_metric
from synthrisk.metrics._params import Param, column_list, integer
from synthrisk.results import MetricResult, to_jsonable
from synthrisk.schema import Tables

real = pd.DataFrame({"age": [30, 40]})

# ------------------------------------------------------------------ building a metric

NNDR(rank=5, distance="gower")
NNDR(rank="ten")  # E: arg-type
NNDR(no_such_option=1)  # E: call-arg
NNDR(5)  # E: call-arg
SinglingOutRisk(mode="univariate", n_attacks=500, max_attempts=None)
SinglingOutRisk(mode="bivariate")  # E: arg-type
SinglingOutRisk(n_attacks=None)  # E: arg-type
InferenceRisk(secret="income", aux_cols=("age", "sex"), compat="anonymeter-1.1")
InferenceRisk(compat="anonymeter-2.0")  # E: arg-type
# a column list accepts any iterable of names, one name included
DisclosureProtection(known_column_names="age", sensitive_column_names=["income"])
DisclosureProtection(known_column_names=3)  # E: arg-type
LinkabilityRisk(aux_cols=[["age"], ["income", "sex"]])
LinkabilityRisk(aux_cols=[1, 2])  # E: list-item

# ------------------------------------------------------------- reading its parameters

nndr = NNDR()
rank: int = nndr.rank
columns: list[str] | None = DisclosureProtection().known_column_names
distance: int = nndr.distance  # E: assignment
nndr.rank = 3  # E: misc

# --------------------------------------------------- from_params and get_metric are generic

built: NNDR = NNDR.from_params({"rank": 5})
found: type[NNDR] = get_metric("nndr", NNDR)
any_metric: Metric = get_metric("nndr").from_params(None)
not_known: NNDR = get_metric("nndr").from_params(None)  # E: assignment
get_metric("nndr", int)  # E: type-var

# ---------------------------------------------------------- declaring a parameter


class _Declared(Metric):
    id = "declared"

    size: Param[int] = Param(integer(minimum=1), 3, "How many.")
    columns: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True), None, "Which."
    )
    wrong: Param[str] = Param(integer(minimum=1), 3, "Not a string.")  # E: arg-type

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        return Outcome(score=float(self.size), breakdown={})


_Declared(size=2, columns="age")
_Declared(size=2.5)  # E: arg-type

# ------------------------------------------------------------------ JSON is typed

Outcome(score=None, breakdown={"share": 0.5, "columns": ["age"], "test": {"n": 3}})
Outcome(score=None, breakdown={"columns": {"age", "sex"}})  # E: dict-item
as_dict: dict[str, JSONValue] = to_jsonable({"share": 0.5})


def _read(result: MetricResult) -> float:
    return float(result.breakdown["share"])  # E: arg-type


# ------------------------------------------------------------------------ check_int

count: int = check_int(3, name="count", minimum=1)
maybe: int | None = check_int(None, name="maybe", allow_none=True)
not_none: int = check_int(None, name="not_none", allow_none=True)  # E: assignment

# ------------------------------------------------------------------- the public door

evaluate(real, real, real, metrics=["nndr"], seed=1)
evaluate(real, real, metrics={"nndr": {"rank": 5}})
evaluate("real.csv", real)  # E: arg-type
evaluate(real, real, holdout=[1, 2])  # E: arg-type
