# SPDX-License-Identifier: BSD-3-Clause
"""Attacker models of SDMetrics' "Privacy Against Inference" metrics, vectorised.

SDMetrics 0.32 trains a scikit-learn model on the synthetic table's key columns to
predict its sensitive columns, then predicts every real row one ``DataFrame.iloc`` at
a time. Here the same models are fitted on the same encodings and every row is
predicted in one call; the per-row outcomes (hit or miss, loss) are returned so that
the metric can score real and holdout rows alike.

**Ties in the k-nearest-neighbours attacker.** On one-hot keys many synthetic rows are
equally close to a query (the squared distance is twice the number of key columns that
differ). scikit-learn's ``KNeighborsClassifier``, which SDMetrics uses, takes the k
nearest by ``numpy.argpartition``, and which of the equally distant rows that keeps
depends on the CPU: NumPy partitions with AVX-512, AVX2 or plain code as the machine
allows, and each picks other rows among ties. SDMetrics' own score on a tied table
therefore differs from one machine to another (on its test tables by up to 0.2).
``ties="lowest_index"`` (synthrisk's default) keeps the same rule everywhere: the k
nearest, ties at the k-th distance to the lowest synthetic row; ``ties="sklearn"``
(``mode="sdmetrics"`` and the drop-in ``synthrisk.compat.sdmetrics``) lets
scikit-learn's estimator search, which gives SDMetrics' number on the same machine.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from synthrisk._optional import import_optional
from synthrisk.exceptions import InputError
from synthrisk.metrics.ml_inference._cdf import fit_cdf

__all__ = [
    "CATEGORICAL_MODELS",
    "NUMERICAL_MODELS",
    "PLACEHOLDER",
    "TIES",
    "categorical_hits",
    "inverse_cdf_loss",
    "knn_lowest_index",
    "numerical_losses",
]

CATEGORICAL_MODELS = ("knn", "nb", "rf", "svm")
#: how the k-nearest-neighbours attacker chooses among equally distant synthetic rows
TIES = ("lowest_index", "sklearn")
#: KNeighborsClassifier arguments under which the exact search gives its neighbours
_EXACT_KNN_KWARGS = frozenset({"n_neighbors", "algorithm", "leaf_size", "n_jobs"})
NUMERICAL_MODELS = ("lr", "mlp", "svr", "radius_nearest_neighbor")
#: the value SDMetrics puts in place of a missing categorical value
PLACEHOLDER = "place_holder_for_nan"
#: pairwise CDF distances evaluated per block by the radius attacker
_BLOCK = 4_000_000


# --------------------------------------------------------------------- categorical


def _sorted(values: list[Any]) -> list[Any]:
    """``sorted(values)``; numbers before text when a column mixes both (not SDMetrics: it fails)."""
    try:
        return sorted(values)
    except TypeError:
        return sorted(
            values,
            key=lambda v: (
                (0, v) if isinstance(v, (int, float, np.number)) else (1, str(v))
            ),
        )


def _levels(values: pd.Series, *, column: str, mode: str) -> list[Any]:
    """Categories of one synthetic column in SDMetrics' encoder order (missing included)."""
    present = values[~values.isna()]
    uniques = list(pd.unique(present))
    has_missing = bool(values.isna().any())
    if not has_missing:
        return _sorted(uniques)
    if all(isinstance(v, str) for v in uniques):
        return sorted([*uniques, PLACEHOLDER])
    if mode == "sdmetrics":
        msg = (
            f"column {column!r} mixes missing values with non-text values; SDMetrics 0.32 fails here "
            "(its encoder cannot sort the missing-value placeholder among numbers). Use mode='default', "
            "which treats a missing value as a category of its own."
        )
        raise InputError(msg)
    return [*_sorted(uniques), PLACEHOLDER]


def _codes(values: pd.Series, levels: Sequence[Any]) -> np.ndarray:
    """Position of each value in ``levels`` (missing as the placeholder), -1 when unseen."""
    lookup = {
        v: i for i, v in enumerate(levels) if not (isinstance(v, float) and np.isnan(v))
    }
    out = np.full(len(values), -1, dtype=np.int64)
    missing = values.isna().to_numpy()
    code = lookup.get(PLACEHOLDER, -1)
    out[missing] = code
    present = ~missing
    out[present] = [lookup.get(v, -1) for v in values.to_numpy()[present]]
    return out


def _one_hot(codes: np.ndarray, n_levels: Sequence[int]) -> sparse.csr_matrix:
    """One-hot rows as scikit-learn's ``OneHotEncoder`` writes them (CSR, float64)."""
    offsets = np.concatenate([[0], np.cumsum(n_levels)[:-1]]).astype(np.int64)
    n_rows, n_cols = codes.shape
    cols = (codes + offsets[None, :]).ravel()
    rows = np.repeat(np.arange(n_rows), n_cols)
    data = np.ones(rows.size)
    return sparse.csr_matrix(
        (data, (rows, cols)), shape=(n_rows, int(np.sum(n_levels)))
    )


#: scikit-learn estimator of each attacker: module, class, whether it takes the run's seed
_ESTIMATORS = {
    "knn": ("sklearn.neighbors", "KNeighborsClassifier", False),
    "nb": ("sklearn.naive_bayes", "CategoricalNB", False),
    "rf": ("sklearn.ensemble", "RandomForestClassifier", True),
    "svm": ("sklearn.svm", "SVC", True),
    "lr": ("sklearn.linear_model", "LinearRegression", False),
    "mlp": ("sklearn.neural_network", "MLPRegressor", True),
    "svr": ("sklearn.svm", "SVR", False),
}


def _make_estimator(model: str, *, seed: int, model_kwargs: Mapping[str, Any]) -> Any:
    """A fresh scikit-learn estimator for ``model`` (scikit-learn's defaults, then ``model_kwargs``)."""
    import_optional("sklearn", package="scikit-learn")
    module, name, seeded = _ESTIMATORS[model]
    kwargs = dict(model_kwargs)
    if seeded:
        kwargs.setdefault("random_state", seed)
    return getattr(importlib.import_module(module), name)(**kwargs)


def knn_lowest_index(
    x_syn: np.ndarray, y_syn: np.ndarray, x_query: np.ndarray, *, k: int
) -> np.ndarray:
    """k-nearest-neighbours guesses on one-hot keys, ties to the lowest synthetic row.

    ``x_syn`` (n, c) and ``x_query`` (m, c) hold key codes (one column per key); the
    squared Euclidean distance of their one-hot rows is twice the number of key columns
    that differ, so the neighbours are those with the fewest differing keys. Every row
    closer than the k-th distance is a neighbour, and the rows at the k-th distance fill
    the remaining places in row order. The guess for each sensitive column of ``y_syn``
    (n, s), codes ``0..L-1``, is the most frequent code among the k neighbours, the
    smallest code on a tie (as scikit-learn's ``KNeighborsClassifier``). Returns the
    guessed codes, shape (m, s). Exact integer arithmetic: the same on every machine.
    """
    n, m = x_syn.shape[0], x_query.shape[0]
    n_out = y_syn.shape[1]
    out = np.empty((m, n_out), dtype=np.int64)
    if m == 0:
        return out
    dtype = np.int16 if x_syn.shape[1] < 2**15 else np.int64
    n_levels = [int(y_syn[:, j].max()) + 1 for j in range(n_out)]
    one_hot = [
        np.eye(lv, dtype=np.float64)[y_syn[:, j]] for j, lv in enumerate(n_levels)
    ]
    step = max(1, _BLOCK // max(1, n))
    for start in range(0, m, step):
        block = x_query[start : start + step]
        differ = np.zeros((block.shape[0], n), dtype=dtype)
        for c in range(x_syn.shape[1]):
            differ += block[:, c, None] != x_syn[None, :, c]
        kth = np.partition(differ, k - 1, axis=1)[:, k - 1 : k]
        closer = differ < kth
        at_kth = differ == kth
        need = k - closer.sum(axis=1, keepdims=True)
        chosen = closer | (at_kth & (np.cumsum(at_kth, axis=1) <= need))
        weights = chosen.astype(np.float64)
        for j in range(n_out):
            # counts of at most k: exact in any floating-point order
            votes = weights @ one_hot[j]
            out[start : start + step, j] = np.argmax(votes, axis=1)
    return out


def _predict_categorical(
    model: str,
    x_syn: np.ndarray,
    y_syn: np.ndarray,
    x_query: np.ndarray,
    n_levels: Sequence[int],
    *,
    seed: int,
    model_kwargs: Mapping[str, Any],
    ties: str = "lowest_index",
    mode: str = "default",
) -> np.ndarray:
    """Predicted sensitive codes, shape (n_query, n_sensitive)."""
    if model == "nb":  # ordinal keys, one model per sensitive column
        design_syn, design_query = x_syn.astype(np.float64), x_query.astype(np.float64)
    else:
        design_syn, design_query = (
            _one_hot(x_syn, n_levels),
            _one_hot(x_query, n_levels),
        )
    if design_query.shape[0] == 0:
        return np.empty((0, y_syn.shape[1]), dtype=np.int64)
    k = int(model_kwargs.get("n_neighbors", 5))
    if model == "knn" and y_syn.shape[0] < k:
        msg = (
            f"the k-nearest-neighbours attacker needs at least n_neighbors={k} synthetic rows; "
            f"got {y_syn.shape[0]}. Pass model_kwargs={{'n_neighbors': ...}} or more rows."
        )
        raise InputError(msg)
    if (
        model == "knn"
        and ties == "lowest_index"
        and set(model_kwargs) <= _EXACT_KNN_KWARGS
    ):
        return knn_lowest_index(x_syn, y_syn, x_query, k=k)
    try:
        return _fit_predict(
            model, design_syn, y_syn, design_query, seed, model_kwargs, mode=mode
        )
    except ValueError as exc:  # scikit-learn refusing degenerate training data
        msg = (
            f"the {model} attacker could not be trained on the synthetic table ({exc}); "
            "it needs more varied synthetic rows."
        )
        raise InputError(msg) from None


def _fit_predict(
    model: str,
    design_syn: Any,
    y_syn: np.ndarray,
    design_query: Any,
    seed: int,
    model_kwargs: Mapping[str, Any],
    *,
    mode: str = "default",
) -> np.ndarray:
    if model in ("knn", "rf"):  # multi-output natively
        clf = _make_estimator(model, seed=seed, model_kwargs=model_kwargs)
        target = y_syn if y_syn.shape[1] > 1 else y_syn[:, 0]
        clf.fit(design_syn, target)
        pred = np.asarray(clf.predict(design_query))
        return pred.reshape(design_query.shape[0], -1).astype(np.int64)
    columns = []
    for j in range(y_syn.shape[1]):
        classes = np.unique(y_syn[:, j])
        if classes.size == 1:  # one value to learn: the guess (SVC refuses to fit it)
            if model == "svm" and mode == "sdmetrics":
                msg = (
                    "a sensitive column holds one value in the synthetic table; SDMetrics 0.32 "
                    "fails here (scikit-learn's SVC needs two classes). Use mode='default', "
                    "where the attacker guesses that value."
                )
                raise InputError(msg)
            columns.append(np.full(design_query.shape[0], classes[0], dtype=np.int64))
            continue
        clf = _make_estimator(model, seed=seed, model_kwargs=model_kwargs)
        clf.fit(design_syn, y_syn[:, j])
        columns.append(np.asarray(clf.predict(design_query)).astype(np.int64))
    return np.column_stack(columns)


def _majority(predictions: Sequence[np.ndarray], valid: np.ndarray) -> np.ndarray:
    """SDMetrics' ``majority``: the first prediction to reach the highest count wins."""
    n = predictions[0].shape[0]
    # one integer id per predicted tuple
    stacked = np.stack(predictions)  # (k, n, s)
    ids = np.unique(stacked.reshape(-1, stacked.shape[2]), axis=0, return_inverse=True)[
        1
    ]
    ids = ids.reshape(len(predictions), n)
    winner = np.full(n, -1, dtype=np.int64)
    best = np.zeros(n, dtype=np.int64)
    for i in range(len(predictions)):
        freq = np.zeros(n, dtype=np.int64)
        for j in range(i + 1):
            freq += valid[j] & (ids[j] == ids[i])
        take = valid[i] & (freq > best)
        best[take] = freq[take]
        winner[take] = i
    out = np.full(stacked.shape[1:], -1, dtype=np.int64)
    has = winner >= 0
    out[has] = stacked[winner[has], np.flatnonzero(has)]
    return out


def categorical_hits(
    frames: Mapping[str, pd.DataFrame],
    key_fields: Sequence[str],
    sensitive_fields: Sequence[str],
    *,
    models: Sequence[str],
    mode: str,
    seed: int,
    model_kwargs: Mapping[str, Any],
    ties: str = "lowest_index",
) -> dict[str, np.ndarray]:
    """Whether the attacker guesses every sensitive value of each row, per scored table.

    ``frames`` holds the ``synthetic`` table and the tables to score (``real`` and,
    when given, ``holdout``). A row whose key values never occur in the synthetic table
    is a miss (SDMetrics' attacker returns ``None`` for it). With ``mode="sdmetrics"`` a
    missing real sensitive value never equals the predicted placeholder, as in SDMetrics;
    by default missing equals missing. With several ``models`` the majority vote of
    their predictions is the guess (SDMetrics' ``CategoricalEnsemble``). ``ties`` is how
    the k-nearest-neighbours attacker chooses among equally distant synthetic rows (see
    the module docstring).
    """
    syn = frames["synthetic"]
    key_levels = [_levels(syn[c], column=c, mode=mode) for c in key_fields]
    sens_levels = [_levels(syn[c], column=c, mode=mode) for c in sensitive_fields]
    n_levels = [len(levels) for levels in key_levels]
    x_syn = np.column_stack(
        [_codes(syn[c], lv) for c, lv in zip(key_fields, key_levels, strict=False)]
    )
    y_syn = np.column_stack(
        [
            _codes(syn[c], lv)
            for c, lv in zip(sensitive_fields, sens_levels, strict=False)
        ]
    )
    out = {}
    for name, frame in frames.items():
        if name == "synthetic":
            continue
        x = np.column_stack(
            [
                _codes(frame[c], lv)
                for c, lv in zip(key_fields, key_levels, strict=False)
            ]
        ).reshape(len(frame), len(key_fields))
        truth = np.column_stack(
            [
                _codes(frame[c], lv)
                for c, lv in zip(sensitive_fields, sens_levels, strict=False)
            ]
        ).reshape(len(frame), len(sensitive_fields))
        if mode == "sdmetrics":  # NaN != "place_holder_for_nan"
            for j, c in enumerate(sensitive_fields):
                truth[frame[c].isna().to_numpy(), j] = -1
        seen = (x >= 0).all(axis=1)
        # a guess depends on the key values only: predict each distinct key once
        distinct, inverse = np.unique(x[seen], axis=0, return_inverse=True)
        inverse = inverse.ravel()
        preds = []
        for model in models:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                preds.append(
                    _predict_categorical(
                        model,
                        x_syn,
                        y_syn,
                        distinct,
                        n_levels,
                        seed=seed,
                        model_kwargs=model_kwargs,
                        ties=ties,
                        mode=mode,
                    )
                )
        if len(preds) == 1:
            guess = preds[0][inverse]
        else:
            valid = np.ones((len(preds), distinct.shape[0]), dtype=bool)
            guess = _majority(preds, valid)[inverse]
        hits = np.zeros(len(frame), dtype=bool)
        hits[seen] = ((guess == truth[seen]) & (truth[seen] >= 0)).all(axis=1)
        out[name] = hits
    return out


# ----------------------------------------------------------------------- numerical


def inverse_cdf_loss(
    fit_values: np.ndarray, predicted: np.ndarray, actual: np.ndarray, *, p: float
) -> np.ndarray:
    """SDMetrics' ``InverseCDFDistance``: ``sum_j |F_j(pred_j) - F_j(actual_j)|**p`` per row.

    ``F_j`` is the CDF copulas selects for column ``j`` of ``fit_values`` (missing
    values left out).
    """
    loss = np.zeros(predicted.shape[0])
    if predicted.shape[0] == 0:
        return loss
    for j in range(predicted.shape[1]):
        column = fit_values[:, j]
        cdf, _ = fit_cdf(column[~np.isnan(column)])
        loss += np.abs(cdf(predicted[:, j]) - cdf(actual[:, j])) ** p
    return loss


def _radius_predict(
    syn_keys: np.ndarray,
    syn_sensitive: np.ndarray,
    query_keys: np.ndarray,
    *,
    p: float,
    cutoff: float,
    mode: str,
) -> np.ndarray:
    """SDMetrics' radius attacker: synthetic rows whose keys lie within ``cutoff`` in CDF space.

    A synthetic row is a neighbour of a query row when ``sum_j |F_j(q_j) - F_j(s_j)|**p``
    is below ``cutoff**p * n_keys`` (``F_j`` fitted on the synthetic keys). The guess is
    the mean sensitive value of the neighbours, or the synthetic mean when there are
    none. ``mode="sdmetrics"`` reproduces SDMetrics 0.32, which divides the sum of *all*
    synthetic sensitive values by the number of neighbours, and guesses 0 without any.
    """
    n_keys = syn_keys.shape[1]
    threshold = cutoff**p * n_keys
    cdfs = [fit_cdf(syn_keys[:, j])[0] for j in range(n_keys)]
    u_syn = np.column_stack([cdfs[j](syn_keys[:, j]) for j in range(n_keys)])
    u_query = np.column_stack([cdfs[j](query_keys[:, j]) for j in range(n_keys)])
    counts = np.zeros(query_keys.shape[0])
    sums = np.zeros((query_keys.shape[0], syn_sensitive.shape[1]))
    step = max(1, _BLOCK // max(1, syn_keys.shape[0]))
    for start in range(0, query_keys.shape[0], step):
        block = u_query[start : start + step]
        dist = np.zeros((block.shape[0], u_syn.shape[0]))
        for j in range(n_keys):
            dist += np.abs(block[:, j, None] - u_syn[None, :, j]) ** p
        within = dist < threshold
        counts[start : start + step] = within.sum(axis=1)
        if mode != "sdmetrics":
            sums[start : start + step] = within.astype(np.float64) @ syn_sensitive
    with np.errstate(divide="ignore", invalid="ignore"):
        if mode == "sdmetrics":
            guess = syn_sensitive.sum(axis=0)[None, :] / counts[:, None]
        else:
            guess = sums / counts[:, None]
    fallback = 0.0 if mode == "sdmetrics" else syn_sensitive.mean(axis=0)
    return np.where(counts[:, None] == 0, fallback, guess)


def numerical_losses(
    frames: Mapping[str, pd.DataFrame],
    key_fields: Sequence[str],
    sensitive_fields: Sequence[str],
    *,
    model: str,
    mode: str,
    seed: int,
    model_kwargs: Mapping[str, Any],
    p: float,
    cutoff: float = 0.3,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per-row inverse-CDF loss of the attacker's guess, per scored table.

    Returns, for every table but ``synthetic``, the losses of the rows with complete key
    and sensitive values and the positions of those rows. The loss CDFs are fitted on the
    real table's sensitive values (as SDMetrics does) and used for every scored table.
    Synthetic rows with a missing key or sensitive value are left out of training.
    ``mode="sdmetrics"`` refuses missing values, where SDMetrics 0.32 fails.
    """
    fields = [*key_fields, *sensitive_fields]
    syn = frames["synthetic"][fields].to_numpy(dtype=np.float64)
    complete = ~np.isnan(syn).any(axis=1)
    if mode == "sdmetrics" and not complete.all():
        msg = (
            "the `synthetic` table has missing values in the key or sensitive columns; SDMetrics 0.32 "
            "fails on them. Use mode='default', which trains on the complete rows."
        )
        raise InputError(msg)
    syn = syn[complete]
    if syn.shape[0] == 0:
        msg = "no synthetic row has all of the key and sensitive values; nothing to train the attacker on."
        raise InputError(msg)
    k = len(key_fields)
    syn_keys, syn_sensitive = syn[:, :k], syn[:, k:]
    if model != "radius_nearest_neighbor":
        regressors = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                if model == "svr":
                    for j in range(syn_sensitive.shape[1]):
                        reg = _make_estimator(
                            model, seed=seed, model_kwargs=model_kwargs
                        )
                        regressors.append(reg.fit(syn_keys, syn_sensitive[:, j]))
                else:
                    reg = _make_estimator(model, seed=seed, model_kwargs=model_kwargs)
                    regressors.append(reg.fit(syn_keys, syn_sensitive))
            except ValueError as exc:  # e.g. an MLP diverging on magnitudes near 1e300
                msg = (
                    f"the {model} attacker could not be trained on the synthetic key and sensitive "
                    f"values ({exc}); rescale very large values."
                )
                raise InputError(msg) from None
    scored: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for name, frame in frames.items():
        if name == "synthetic":
            continue
        values = frame[fields].to_numpy(dtype=np.float64)
        rows = np.flatnonzero(~np.isnan(values).any(axis=1))
        if mode == "sdmetrics" and rows.size != len(frame):
            msg = (
                f"the `{name}` table has missing values in the key or sensitive columns; SDMetrics 0.32 "
                "fails on them. Use mode='default', which scores the complete rows."
            )
            raise InputError(msg)
        keys, actual = values[rows, :k], values[rows, k:]
        if rows.size == 0:
            guess = np.empty_like(actual)
        elif model == "radius_nearest_neighbor":
            guess = _radius_predict(
                syn_keys, syn_sensitive, keys, p=p, cutoff=cutoff, mode=mode
            )
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                guess = np.column_stack(
                    [
                        np.asarray(r.predict(keys)).reshape(len(rows), -1)
                        for r in regressors
                    ]
                )
        scored[name] = (guess, actual, rows)
    # the loss is measured on the real table's scale for every scored table
    reference = scored["real"][1]
    if reference.shape[0] == 0:
        msg = "no real row has all of the key and sensitive values; nothing to score."
        raise InputError(msg)
    return {
        name: (inverse_cdf_loss(reference, guess, actual, p=p), rows)
        for name, (guess, actual, rows) in scored.items()
    }
