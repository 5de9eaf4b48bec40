# SPDX-License-Identifier: BSD-3-Clause
"""Anonymeter-compatible evaluators backed by synthrisk.

``SinglingOutEvaluator``, ``LinkabilityEvaluator`` and ``InferenceEvaluator`` take the
constructor arguments of Anonymeter 1.1 (``ori, syn, control, ...``) and offer its
life-cycle (``evaluate()`` → ``results()`` / ``risk()``). By default they reproduce
Anonymeter 1.1's behaviour, bugs included (``compat="anonymeter-1.1"``); pass
``compat="anonymeter-1.0"`` for the version PETsARD pins, or ``compat=None`` for
synthrisk's fixed behaviour. Random parts cannot be bit-identical to Anonymeter
(its tie order and unseeded draws), so results agree statistically, not digit for digit.

Differences of the API: ``queries()`` returns polars expressions when polars is
installed and readable strings otherwise (or with ``as_strings=True``);
``queries(baseline=True)`` returns the random queries that singled out
(Anonymeter's accessor always returns an empty list); ``n_jobs`` is accepted and
ignored (synthrisk uses all cores through numba); every evaluator accepts ``seed``.

>>> import pandas as pd
>>> from synthrisk.compat.anonymeter import LinkabilityEvaluator
>>> ori = pd.DataFrame({"col0": [0, 0, 4, 0], "col1": [0, 1, 9, 4]})
>>> syn = pd.DataFrame({"col0": [0, 1, 4, 9], "col1": [0, 1, 4, 9]})
>>> ev = LinkabilityEvaluator(ori=ori, syn=syn, aux_cols=(["col0"], ["col1"]), n_attacks=4).evaluate()
>>> ev.risk(confidence_level=0).value
0.25
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Sequence
from typing import Any, Literal, Protocol, TypeVar

import numpy as np
import pandas as pd

from synthrisk._typing import FloatArray, IntArray
from synthrisk.exceptions import ParameterError, UnreliableEstimateWarning
from synthrisk.metrics import Context
from synthrisk.metrics.attacks import check_compat, polars_term
from synthrisk.metrics.attacks.inference import (
    InferenceAttack,
    inference_attack,
    inference_success,
)
from synthrisk.metrics.attacks.linkability import (
    LinkabilityAttack,
    check_aux_pair,
    linkability_attack,
)
from synthrisk.metrics.attacks.singling_out import (
    SinglingOutAttack,
    singling_out_attack,
)
from synthrisk.metrics.attacks.singling_out import (
    singling_out_probability_integral as _integral,
)
from synthrisk.schema.tables import Tables, prepare_tables
from synthrisk.stats.intervals import (
    AttackEstimate,
    PrivacyRisk,
    SuccessRate,
    bind_value,
    estimate_attack,
    probit,
    residual_success,
    success_rate,
)

__all__ = [
    "EvaluationResults",
    "InferenceEvaluator",
    "LinkabilityEvaluator",
    "PrivacyRisk",
    "SinglingOutEvaluator",
    "SklearnInferencePredictor",
    "SuccessRate",
    "bind_value",
    "evaluate_inference_guesses",
    "evaluation_results",
    "probit",
    "residual_success",
    "singling_out_probability_integral",
    "success_rate",
]


_T = TypeVar("_T")


class InferencePredictor(Protocol):
    """Anonymeter 1.1's custom inference model: ``predict(x) -> pandas Series``."""

    def predict(self, x: pd.DataFrame) -> pd.Series:
        """Guess the secret of every row of ``x``."""
        ...


class EvaluationResults:
    """Rates and risk of an evaluation, with Anonymeter 1.1's constructor and attributes.

    ``EvaluationResults(n_attacks, n_success, n_baseline, n_control=None,
    confidence_level=0.95)`` as in Anonymeter (``n_attacks`` may be a tuple of the main,
    baseline and control attack counts); a synthrisk ``AttackEstimate`` may be passed
    instead of ``n_attacks``. Warns (``UnreliableEstimateWarning``, a ``UserWarning``)
    when the attack does no better than the baseline, or when the control attack always
    succeeds, as Anonymeter does.
    """

    def __init__(
        self,
        n_attacks: int | tuple[int, int, int] | AttackEstimate,
        n_success: float | None = None,
        n_baseline: float | None = None,
        n_control: float | None = None,
        confidence_level: float = 0.95,
        *,
        warn: bool = True,
    ) -> None:
        if isinstance(n_attacks, AttackEstimate):
            estimate = n_attacks
        else:
            if n_success is None or n_baseline is None:
                msg = "`n_success` and `n_baseline` are required with `n_attacks`."
                raise TypeError(msg)
            if isinstance(n_attacks, tuple):
                if len(n_attacks) != 3:
                    msg = f"n_attacks must be an integer or a tuple of three integers, got {n_attacks}"
                    raise ValueError(msg)
                n_main, n_base, n_ctrl = (int(v) for v in n_attacks)
            elif isinstance(n_attacks, (int, np.integer)) and not isinstance(
                n_attacks, bool
            ):
                n_main = n_base = n_ctrl = int(n_attacks)
            else:
                msg = f"n_attacks must be an integer or a tuple of three integers, got {n_attacks}"
                raise ValueError(msg)
            estimate = estimate_attack(
                n_success=n_success,
                n_attacks=n_main,
                n_baseline=n_baseline,
                n_baseline_attacks=n_base,
                n_control=n_control,
                n_control_attacks=n_ctrl,
                confidence_level=confidence_level,
            )
        self._estimate = estimate
        self.n_attacks_ori = estimate.n_attacks
        self.n_attacks_baseline = estimate.n_baseline_attacks
        self.n_attacks_control = (
            -1 if estimate.n_control_attacks is None else estimate.n_control_attacks
        )
        self.n_success = estimate.n_success
        self.n_baseline = estimate.n_baseline
        self.n_control = estimate.n_control
        self.attack_rate: SuccessRate = estimate.attack_rate
        self.baseline_rate: SuccessRate = estimate.baseline_rate
        self.control_rate: SuccessRate | None = estimate.control_rate
        if warn:
            for message in estimate.warnings():
                warnings.warn(message, UnreliableEstimateWarning, stacklevel=3)

    @property
    def estimate(self) -> AttackEstimate:
        """The underlying synthrisk estimate."""
        return self._estimate

    def risk(self, baseline: bool = False) -> PrivacyRisk:
        """The privacy risk (or the baseline rate as a risk)."""
        return self._estimate.risk(baseline=baseline)


class SklearnInferencePredictor:
    """Anonymeter 1.1's wrapper of a fitted scikit-learn model as an inference model.

    Parameters
    ----------
    model : scikit-learn classifier or regressor
        Fitted, with its own preprocessing; ``predict(x)`` must keep ``x``'s row order.
    """

    def __init__(self, model: Any) -> None:
        from sklearn.base import is_classifier, is_regressor

        try:
            supported = bool(is_classifier(model) or is_regressor(model))
        except (AttributeError, TypeError):  # not a scikit-learn estimator at all
            supported = False
        if not supported:
            msg = f"Model must be classifier or regressor; got {model!r}."
            raise ValueError(msg)
        if not hasattr(model, "predict"):
            msg = f"Model must have a predict method; got {model!r}."
            raise ValueError(msg)
        self._model = model

    def predict(self, x: pd.DataFrame) -> pd.Series:
        """The model's guesses for the rows of ``x`` (same index)."""
        return pd.Series(self._model.predict(x), index=x.index)


def evaluate_inference_guesses(
    guesses: pd.Series, secrets: pd.Series, regression: bool, tolerance: float = 0.05
) -> np.ndarray:
    """Anonymeter 1.1's ``evaluate_inference_guesses``: which guesses are correct.

    Exact equality (``regression=False``) or ``|g - s| / (g + 1e-12) <= tolerance``
    (Anonymeter's rule, relative to the guess); a missing guess of a missing secret is
    correct. The indices of ``guesses`` and ``secrets`` must match.
    """
    if not guesses.index.equals(secrets.index):
        msg = "The predictions indices do not match the target indices. Check your inference model."
        raise RuntimeError(msg)
    g, t = guesses.to_numpy(), secrets.to_numpy()
    both_missing = np.asarray(pd.isnull(g) & pd.isnull(t), dtype=bool)
    if regression:
        match = inference_success(
            g.astype(np.float64),
            t.astype(np.float64),
            regression=True,
            closeness=tolerance,
            rule="anonymeter",
        )
    else:
        match = np.asarray(g == t, dtype=bool)
    return np.asarray(both_missing | match, dtype=bool)


def singling_out_probability_integral(n: int, w_min: float, w_max: float) -> float:
    """Anonymeter 1.1's integral of ``n w (1 - w)^(n - 1)`` over ``[w_min, w_max]`` (Cohen and Nissim 2020)."""
    if w_min < 0 or w_min > 1:
        msg = f"Parameter `w_min` must be between 0 and 1. Got {w_min} instead."
        raise ValueError(msg)
    if w_max < w_min or w_max > 1:
        msg = f"Parameter `w_max` must be greater than w_min ({w_min}) and smaller than 1. Got {w_max} instead."
        raise ValueError(msg)
    return float(_integral(n, w_max) - _integral(n, w_min))


def _query_expressions(
    attack: SinglingOutAttack, which: Literal["main", "baseline"]
) -> list[Any]:
    """The queries that singled out a real row (or the baseline's), as polars expressions."""
    import polars as pl

    if which == "baseline":
        batch, keep = attack.baseline_queries, attack.baseline_counts == 1
    else:
        batch, keep = attack.queries, attack.main_counts == 1
    info = attack.info
    out = []
    for i in np.flatnonzero(keep):
        expr = None
        for t in range(int(batch.lengths[i])):
            column, op, raw = (
                int(batch.cols[i, t]),
                int(batch.ops[i, t]),
                float(batch.vals[i, t]),
            )
            col = pl.col(info.names[column])
            kind = info.kinds[column]
            value: Any
            if kind in ("categorical", "boolean"):
                categories = info.categories[column]
                assert categories is not None
                item = categories[int(raw)]
                value = item.item() if hasattr(item, "item") else item
            elif kind == "datetime":
                value = pd.Timestamp(
                    info.time_origin + round(raw * 1e9)
                ).to_pydatetime()
            elif info.integral[column] and raw.is_integer():
                value = int(raw)
            else:
                value = raw
            term: Any = polars_term(op, col, value)
            expr = term if expr is None else expr & term
        out.append(expr)
    return out


def _kind(series: pd.Series) -> str:
    """Anonymeter's typing: numbers are numeric (bool is not), everything else categorical."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_numeric_dtype(dtype) and not isinstance(
        dtype, pd.CategoricalDtype
    ):
        return "numerical"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime"
    return "categorical"


def _prepare(ori: Any, syn: Any, control: Any) -> Tables:
    if not isinstance(ori, pd.DataFrame) or not isinstance(syn, pd.DataFrame):
        msg = "`ori` and `syn` must be pandas DataFrames."
        raise ParameterError(msg)
    metadata = {"columns": {str(c): {"kind": _kind(ori[c])} for c in ori.columns}}
    return prepare_tables(ori, syn, control, metadata=metadata)


def _rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    return (
        seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    )


def _evaluated(attack: _T | None, name: str) -> _T:
    if attack is None:
        msg = f"The {name} evaluator wasn't evaluated yet. Please, run `evaluate()` first."
        raise RuntimeError(msg)
    return attack


class SinglingOutEvaluator:
    """Singling-out risk with Anonymeter 1.1's API.

    Parameters
    ----------
    ori, syn : pandas DataFrame
        Original (training) and synthetic data.
    n_attacks : int, default=500
        Number of singling-out queries to generate.
    n_cols : int, default=3
        Columns per multivariate query.
    control : pandas DataFrame, default=None
        Original rows not used to train the generator.
    max_attempts : int or None, default=10_000_000
        Cap on multivariate candidate queries.
    seed : int, default=None
        Seed of every random draw (fresh entropy when None).
    compat : {"anonymeter-1.1", "anonymeter-1.0", None}, default="anonymeter-1.1"
        Behaviour to reproduce; None for synthrisk's fixed behaviour.
    """

    def __init__(
        self,
        ori: pd.DataFrame,
        syn: pd.DataFrame,
        n_attacks: int = 500,
        n_cols: int = 3,
        control: pd.DataFrame | None = None,
        max_attempts: int | None = 10_000_000,
        seed: int | None = None,
        *,
        compat: str | None = "anonymeter-1.1",
    ) -> None:
        self._frames = (ori, syn, control)
        self._tables: Tables | None = None
        self._n_attacks = n_attacks
        self._n_cols = n_cols
        self._max_attempts = max_attempts
        self._compat = check_compat(compat)
        self._rng = _rng(seed)
        self._attack: SinglingOutAttack | None = None

    def evaluate(self, mode: str = "multivariate") -> SinglingOutEvaluator:
        """Generate the queries and run the main, baseline and control attacks."""
        if mode not in ("multivariate", "univariate"):
            msg = f"mode must be either 'multivariate' or 'univariate', got {mode} instead."
            raise ValueError(msg)
        if self._tables is None:
            self._tables = _prepare(*self._frames)
        self._attack = singling_out_attack(
            self._tables,
            mode=mode,  # type: ignore[arg-type]
            n_attacks=self._n_attacks,
            n_cols=self._n_cols,
            max_attempts=self._max_attempts,
            compat=self._compat,
            rng=self._rng,
        )
        for message in self._attack.warnings:
            warnings.warn(message, UnreliableEstimateWarning, stacklevel=2)
        return self

    @property
    def attack(self) -> SinglingOutAttack:
        """The synthrisk attack result."""
        return _evaluated(self._attack, "singling out")

    def queries(self, baseline: bool = False, *, as_strings: bool = False) -> list[Any]:
        """The successful queries of the main (or baseline) attack.

        polars expressions when polars is installed (as Anonymeter 1.1 returns them),
        readable strings otherwise or with ``as_strings=True``.
        """
        which: Literal["main", "baseline"] = "baseline" if baseline else "main"
        if as_strings or importlib.util.find_spec("polars") is None:
            return self.attack.query_strings(which)
        return _query_expressions(self.attack, which)

    @property
    def _ori(self) -> Any:
        """The original table as a polars DataFrame (Anonymeter's private attribute)."""
        import polars as pl

        return pl.from_pandas(self._frames[0])

    @property
    def _syn(self) -> Any:
        """The synthetic table as a polars DataFrame (Anonymeter's private attribute)."""
        import polars as pl

        return pl.from_pandas(self._frames[1])

    def results(self, confidence_level: float = 0.95) -> EvaluationResults:
        """Rates of the three attacks."""
        return EvaluationResults(
            self.attack.estimate(confidence_level=confidence_level)
        )

    def risk(
        self, confidence_level: float = 0.95, baseline: bool = False
    ) -> PrivacyRisk:
        """The singling-out risk and its interval."""
        return self.attack.estimate(confidence_level=confidence_level).risk(
            baseline=baseline
        )


class LinkabilityEvaluator:
    """Linkability risk with Anonymeter 1.1's API.

    Parameters
    ----------
    ori, syn : pandas DataFrame
        Original and synthetic data.
    aux_cols : pair of lists of str
        The attacker's two column sets.
    n_attacks : int or None, default=500
        Targets; None = every original row. Capped (with a warning) to the size of the
        control set, where Anonymeter raises.
    n_neighbors : int, default=1
        Neighbours computed per half; ``results(n_neighbors=k)`` re-counts for smaller k.
    control : pandas DataFrame, default=None
        Original rows not used to train the generator.
    seed : int, default=None
        Seed of every random draw (fresh entropy when None).
    compat : {"anonymeter-1.1", "anonymeter-1.0", None}, default="anonymeter-1.1"
        Behaviour to reproduce; None for synthrisk's fixed behaviour.
    """

    def __init__(
        self,
        ori: pd.DataFrame,
        syn: pd.DataFrame,
        aux_cols: Sequence[Sequence[str]],
        n_attacks: int | None = 500,
        n_neighbors: int = 1,
        control: pd.DataFrame | None = None,
        *,
        seed: int | None = None,
        compat: str | None = "anonymeter-1.1",
    ) -> None:
        self._ori = ori
        self._syn = syn
        self._control = control
        self._aux_cols = aux_cols
        self._n_attacks = len(ori) if n_attacks is None else n_attacks
        self._n_neighbors = n_neighbors
        self._compat = check_compat(compat)
        self._rng = _rng(seed)
        self._attack: LinkabilityAttack | None = None

    def evaluate(self, n_jobs: int = -2) -> LinkabilityEvaluator:
        """Run the main, baseline and control attacks."""
        halves = check_aux_pair(
            [list(h) if not isinstance(h, str) else [h] for h in self._aux_cols]
        )
        tables = _prepare(self._ori, self._syn, self._control)
        self._attack = linkability_attack(
            tables,
            aux_cols=halves,
            n_attacks=self._n_attacks,
            n_neighbors=self._n_neighbors,
            compat=self._compat,
            rng=self._rng,
            context=Context(),
        )
        for message in self._attack.warnings:
            warnings.warn(message, UnreliableEstimateWarning, stacklevel=2)
        return self

    @property
    def attack(self) -> LinkabilityAttack:
        """The synthrisk attack result."""
        return _evaluated(self._attack, "linkability")

    def results(
        self, confidence_level: float = 0.95, n_neighbors: int | None = None
    ) -> EvaluationResults:
        """Rates of the three attacks, counting links among the first ``n_neighbors``."""
        return EvaluationResults(
            self.attack.estimate(
                confidence_level=confidence_level, n_neighbors=n_neighbors
            )
        )

    def risk(
        self,
        confidence_level: float = 0.95,
        baseline: bool = False,
        n_neighbors: int | None = None,
    ) -> PrivacyRisk:
        """The linkability risk and its interval."""
        estimate = self.attack.estimate(
            confidence_level=confidence_level, n_neighbors=n_neighbors
        )
        return estimate.risk(baseline=baseline)


class InferenceEvaluator:
    """Inference risk with Anonymeter 1.1's API.

    Parameters
    ----------
    ori, syn : pandas DataFrame
        Original and synthetic data.
    aux_cols : list of str
        Columns the attacker knows.
    secret : str
        Column the attacker guesses.
    regression : bool or None, default=False
        Judge guesses within 5 % (True) or exactly (False, Anonymeter 1.1's default);
        None decides from the column type.
    n_attacks : int, default=500
        Targets per attack (capped to the sizes of the tables, as 1.1 does).
    control : pandas DataFrame, default=None
        Original rows not used to train the generator.
    inference_model : object with ``predict(x) -> Series``, default=None
        Custom guesser replacing the nearest neighbour (fitted on ``syn``).
    seed : int, default=None
        Seed of every random draw (fresh entropy when None).
    compat : {"anonymeter-1.1", "anonymeter-1.0", None}, default="anonymeter-1.1"
        Behaviour to reproduce; None for synthrisk's fixed behaviour.
    """

    def __init__(
        self,
        ori: pd.DataFrame,
        syn: pd.DataFrame,
        aux_cols: Sequence[str],
        secret: str,
        regression: bool | None = False,
        n_attacks: int = 500,
        control: pd.DataFrame | None = None,
        inference_model: InferencePredictor | None = None,
        *,
        seed: int | None = None,
        compat: str | None = "anonymeter-1.1",
    ) -> None:
        if not isinstance(secret, str):
            msg = "secret must be a single column name"
            raise ValueError(msg)
        if secret not in ori.columns:
            msg = f"secret column '{secret}' not found in ori dataframe"
            raise ValueError(msg)
        self._ori = ori
        self._syn = syn
        self._control = control
        self._aux_cols = list(aux_cols)
        self._secret = secret
        self._regression = regression
        self._n_attacks = n_attacks
        self._model = inference_model
        self._compat = check_compat(compat)
        self._rng = _rng(seed)
        self._attack: InferenceAttack | None = None
        self._tables: Tables | None = None

    def _guess_with_model(self, tables: Tables) -> Any:
        model = self._model
        assert model is not None
        frames = {"real": self._ori, "holdout": self._control}
        kind = tables.schema[self._secret].kind

        def guess(name: str, rows: IntArray) -> FloatArray:
            frame = frames[name]
            assert frame is not None
            predicted = model.predict(frame.iloc[rows])
            values = pd.Series(np.asarray(predicted), dtype=object)
            if kind in ("categorical", "boolean"):
                codes = (
                    tables.encoder.categories[self._secret]
                    .get_indexer(values)
                    .astype(np.float64)
                )
                codes[codes < 0] = np.nan
                return codes
            return pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)

        return guess

    def evaluate(self, n_jobs: int = -2) -> InferenceEvaluator:
        """Run the main, baseline and control attacks."""
        tables = _prepare(self._ori, self._syn, self._control)
        labels = None
        if self._ori.index.is_unique and self._syn.index.is_unique:
            labels = {
                "real": self._ori.index.to_numpy(),
                "synthetic": self._syn.index.to_numpy(),
            }
        self._attack = inference_attack(
            tables,
            secret=self._secret,
            aux_cols=self._aux_cols,
            n_attacks=self._n_attacks,
            regression=self._regression,
            compat=self._compat,
            rng=self._rng,
            context=Context(),
            guess=None if self._model is None else self._guess_with_model(tables),
            labels=labels,
            max_groups=None,
        )
        self._tables = tables
        for message in self._attack.warnings:
            warnings.warn(message, UnreliableEstimateWarning, stacklevel=2)
        return self

    @property
    def attack(self) -> InferenceAttack:
        """The synthrisk attack result."""
        return _evaluated(self._attack, "inference")

    def results(self, confidence_level: float = 0.95) -> EvaluationResults:
        """Rates of the three attacks."""
        return EvaluationResults(
            self.attack.estimate(confidence_level=confidence_level)
        )

    def risk(
        self, confidence_level: float = 0.95, baseline: bool = False
    ) -> PrivacyRisk:
        """The inference risk and its interval."""
        return self.attack.estimate(confidence_level=confidence_level).risk(
            baseline=baseline
        )

    def risk_for_groups(
        self, confidence_level: float = 0.95
    ) -> dict[Any, EvaluationResults]:
        """Results per value of the secret among the attacked targets."""
        attack = self.attack
        assert self._tables is not None
        kind = self._tables.schema[self._secret].kind
        out: dict[Any, EvaluationResults] = {}
        for value, estimate in attack.groups(confidence_level=confidence_level).items():
            if kind in ("categorical", "boolean"):
                key: Any = self._tables.encoder.categories[self._secret][int(value)]
            elif kind == "datetime":
                key = pd.Timestamp(
                    self._tables.encoder.time_origin + round(value * 1e9)
                )
            else:
                key = int(value) if float(value).is_integer() else value
            out[key] = EvaluationResults(estimate, warn=False)
        return out


def evaluation_results(
    n_attacks: int | tuple[int, int, int],
    n_success: float,
    n_baseline: float,
    n_control: float | None = None,
    confidence_level: float = 0.95,
) -> EvaluationResults:
    """Anonymeter's ``EvaluationResults(n_attacks, n_success, n_baseline, n_control, confidence_level)``."""
    return EvaluationResults(
        n_attacks, n_success, n_baseline, n_control, confidence_level
    )
