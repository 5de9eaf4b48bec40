# SPDX-License-Identifier: BSD-3-Clause
"""A checked holdout: new people from the training population, or the control is void.

Every gating judgement of the verdict compares what an attack learns about the training
rows with what it learns about the holdout rows. That comparison means something only
when the holdout rows are *other people* drawn from the *same population*. This module
checks both before the metrics run (:func:`check_holdout`):

* **same content**: a holdout that holds exactly the training rows (in any order, or
  the same file) is refused with an :class:`~synthrisk.exceptions.InputError`;
* **overlap**: holdout rows whose record (every column) also occurs in the training
  table, against the share expected by chance — the share of training rows whose record
  occurs elsewhere in the training table (under a random split a holdout row and a
  training row are alike) — and shared values of an identifier or person key;
* **repeated people** (panel data without a person key): holdout rows whose record
  occurs in the training table far more often than a model of independent people
  predicts (a tree of the columns' pairwise dependence, Chow & Liu 1968), while the
  training table repeats its own records far beyond that model too;
* **population**: a classifier telling holdout rows from training rows (logistic
  regression on the encoded columns, two-fold cross-validated); its ROC AUC's DeLong
  interval above a tolerance means the holdout comes from another population.

Any finding caps the overall verdict at ``review``: the report's ``inputs`` get a
JSON-safe block ``holdout_check`` that :func:`synthrisk.verdict.judge` reads (so a
report re-read from JSON is judged the same), and a warning about the inputs that the
verdict's caveats list first. See ``docs/verdict.md``, "A checked holdout".
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from synthrisk._typing import JSONValue
from synthrisk.exceptions import InputError
from synthrisk.schema.schema import is_person_key
from synthrisk.schema.tables import Tables
from synthrisk.stats.ranking import delong_auc

__all__ = [
    "ALPHA",
    "AUC_TOLERANCE",
    "MIN_EXCESS",
    "check_holdout",
    "holdout_block",
]

#: one-sided level of the overlap and repeated-people tests (each runs once per run)
ALPHA = 0.001
#: smallest excess share of overlapping holdout rows that is reported
MIN_EXCESS = 0.02
#: the repeated-people rule: at least this many times the model's chance share ...
PANEL_FACTOR = 2.0
#: ... and at least this much more, as a share of the holdout rows
PANEL_MIN_EXCESS = 0.05
#: a holdout classifier's AUC whose interval lies above this says "another population"
AUC_TOLERANCE = 0.6
#: confidence level of the AUC's interval (its lower bound is compared with the tolerance)
AUC_CONFIDENCE = 0.999
#: rows per side the classifier is trained and scored on (a seeded sample)
CLASSIFIER_ROWS = 2000
#: categories per column kept as indicator columns by the classifier (the rest pooled)
MAX_CATEGORIES = 20
#: columns whose distinct values exceed this share of rows are left out of the model of
#: chance matches as a factor of their own value frequency (no pairwise dependence)
_HIGH_CARDINALITY = 0.2


def check_holdout(tables: Tables, *, seed: int = 0) -> dict[str, JSONValue] | None:
    """Check that the holdout holds new people from the training population.

    Parameters
    ----------
    tables : Tables
        Validated tables; nothing is checked without a holdout.
    seed : int, default=0
        Seed of the classifier's sample and folds.

    Returns
    -------
    dict or None
        The JSON-safe block ``inputs["holdout_check"]`` (``overlap``, ``repeated_people``,
        ``population``, ``caps_at`` and ``reasons``); None without a holdout.

    Raises
    ------
    InputError
        The holdout holds exactly the training rows (any order).
    """
    if tables.holdout is None:
        return None
    real, holdout = tables.real, tables.holdout
    keys = _key_columns(tables)
    columns = [
        c.name
        for c in tables.schema.modelable
        if c.name in real.columns and c.name not in keys
    ]
    if not columns:
        columns = [str(c) for c in real.columns if c not in keys]
    codes_real, codes_hold = _record_codes(real, holdout, columns)
    if len(real) == len(holdout) and _same_rows(real, holdout):
        msg = (
            f"the holdout table holds the same {len(real):,} rows as the real (training) "
            "table: the holdout must be real people the generator never saw, drawn from the "
            "same population (for example a random part of the real data set aside before "
            "training). Pass that part as the holdout, not the training table."
        )
        raise InputError(msg)
    overlap = _overlap(codes_real, codes_hold, real, holdout, keys)
    repeated = _repeated_people(real, holdout, columns, codes_real, codes_hold, keys)
    population = _population(real, holdout, columns, seed=seed)
    reasons = []
    capping = False
    if overlap["excess"]:
        reasons.append(_overlap_text(overlap))
        capping = True
    if repeated["likely"]:
        # a panel split by rows: said, not capped. The same people on both sides make
        # the holdout control compare people with themselves, but a generator that never
        # saw the training rows still finds them no more often than the holdout's: the
        # row-level tests stay unbiased, and the caveat says what the verdict cannot
        # promise without a person key
        reasons.append(_repeated_text(repeated))
    if population.get("shifted"):
        reasons.append(_population_text(population))
        capping = True
    return {
        "overlap": overlap,
        "repeated_people": repeated,
        "population": population,
        "caps_at": "review" if capping else None,
        "reasons": list(reasons),
    }


def holdout_block(inputs: Any) -> dict[str, Any] | None:
    """The ``holdout_check`` block of a report's ``inputs`` (None when absent)."""
    if not isinstance(inputs, dict):
        return None
    block = inputs.get("holdout_check")
    return block if isinstance(block, dict) else None


def holdout_warnings(block: dict[str, JSONValue] | None) -> list[str]:
    """The warnings about the inputs that a ``holdout_check`` block gives."""
    if block is None:
        return []
    reasons = block.get("reasons")
    return [str(r) for r in reasons] if isinstance(reasons, list) else []


# ---------------------------------------------------------------------------- records


def _key_columns(tables: Tables) -> list[str]:
    """Identifier columns (kind ``id``) and the person key, when the tables have them."""
    real = tables.real
    keys = [c.name for c in tables.schema.columns if c.kind == "id"]
    for column in real.columns:
        name = str(column)
        if name not in keys and is_person_key(real[column], name):
            keys.append(name)
    return [k for k in keys if k in real.columns]


def _row_hash(
    real: pd.DataFrame, holdout: pd.DataFrame, columns: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """A 64-bit hash of each row on ``columns`` (one dtype per column for both tables)."""
    both = pd.concat([real[list(columns)], holdout[list(columns)]], ignore_index=True)
    hashed = pd.util.hash_pandas_object(both, index=False).to_numpy()
    return hashed[: len(real)], hashed[len(real) :]


def _same_rows(real: pd.DataFrame, holdout: pd.DataFrame) -> bool:
    """Whether both tables hold the same rows (every column), in any order.

    A table of one record repeated (every person alike) is left to the overlap check:
    there a holdout of new people holds the same rows too.
    """
    h_real, h_hold = _row_hash(real, holdout, [str(c) for c in real.columns])
    if np.unique(h_real).size < 2:
        return False
    return bool(np.array_equal(np.sort(h_real), np.sort(h_hold)))


def _record_codes(
    real: pd.DataFrame, holdout: pd.DataFrame, columns: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of each row's record: equal codes, equal rows on ``columns``."""
    h_real, h_hold = _row_hash(real, holdout, columns)
    codes = pd.factorize(np.concatenate([h_real, h_hold]))[0]
    return codes[: len(real)], codes[len(real) :]


def _duplicated_within(codes: np.ndarray) -> np.ndarray:
    """Whether each row's record occurs in another row of the same table."""
    counts = np.bincount(codes)
    return counts[codes] > 1


def _binomial_p(k: int, n: int, p: float) -> float:
    """One-sided p-value of ``k`` or more successes among ``n`` at rate ``p``."""
    if n == 0 or k == 0:
        return 1.0
    if p <= 0.0:
        return 0.0
    return float(sps.binom.sf(k - 1, n, min(p, 1.0)))


def _is_row_counter(values: pd.Series) -> bool:
    """A per-file row number (0..n-1 or 1..n), which says nothing about people."""
    numbers = pd.to_numeric(values, errors="coerce")
    if values.empty or numbers.isna().any():
        return False
    ordered = np.sort(numbers.to_numpy(dtype=float))
    start = int(ordered[0])
    return start in (0, 1) and bool(
        np.array_equal(ordered, np.arange(start, start + len(ordered)))
    )


def _overlap(
    codes_real: np.ndarray,
    codes_hold: np.ndarray,
    real: pd.DataFrame,
    holdout: pd.DataFrame,
    keys: Sequence[str],
) -> dict[str, JSONValue]:
    """Exact records and identifier values the holdout shares with the training table."""
    n_hold = len(codes_hold)
    in_real = np.isin(codes_hold, codes_real)
    shared = int(in_real.sum())
    share = shared / n_hold if n_hold else 0.0
    expected = float(_duplicated_within(codes_real).mean()) if len(codes_real) else 0.0
    p_value = _binomial_p(shared, n_hold, expected)
    excess = bool(p_value < ALPHA and share - expected >= MIN_EXCESS)
    ids: dict[str, JSONValue] = {}
    for key in keys:
        if _is_row_counter(real[key]) and _is_row_counter(holdout[key]):
            continue
        # hashed look-ups (numpy's isin sorts object arrays: seconds on 40,000 rows)
        left = real[key].dropna().astype(str)
        hits = int(holdout[key].dropna().astype(str).isin(left).sum())
        if hits:
            ids[key] = hits
    return {
        "rows": shared,
        "share": share,
        "expected_share": expected,
        "p_value": p_value,
        "excess": excess or bool(ids),
        "records_excess": excess,
        "shared_ids": ids,
        "holdout_rows": n_hold,
    }


def _overlap_text(overlap: dict[str, JSONValue]) -> str:
    parts = []
    if overlap.get("records_excess"):
        parts.append(
            f"{_pct(overlap['share'])} of the holdout rows ({overlap['rows']:,}) repeat a "
            f"training row exactly, where about {_pct(overlap['expected_share'])} would by "
            f"chance (the training table's own rate; p = {_num(overlap['p_value'])})"
        )
    ids = overlap.get("shared_ids")
    if isinstance(ids, dict) and ids:
        named = ", ".join(f"{k!r} ({v:,} rows)" for k, v in ids.items())
        parts.append(
            f"holdout rows share identifier values with training rows: {named}"
        )
    return (
        "the holdout overlaps the training table: "
        + "; ".join(parts)
        + ". Those people are on both sides, so the holdout control compares them with "
        "themselves and hides what the synthetic table reveals about them; the verdict "
        "cannot pass. Use real people the generator never saw as the holdout (split the "
        "data by person before training)."
    )


# ------------------------------------------------------------------- repeated people


def _column_codes(frame: pd.DataFrame) -> list[np.ndarray]:
    """Integer codes of each column's values (missing values one code)."""
    out = []
    for column in frame.columns:
        codes = pd.factorize(frame[column], use_na_sentinel=False)[0]
        out.append(codes.astype(np.int64))
    return out


def _tree_log_probability(
    train: list[np.ndarray], query: list[np.ndarray], n_values: list[int]
) -> np.ndarray:
    """Log-probability of each query record under a Chow-Liu tree fitted on ``train``.

    The tree joins the columns by the largest pairwise mutual information; each column
    contributes its smoothed probability given its parent (add-one half smoothing). Columns
    with many distinct values join as their own marginal frequency only.
    """
    n = train[0].size
    width = len(train)
    low = [j for j in range(width) if n_values[j] <= max(2, _HIGH_CARDINALITY * n)]
    logp = np.zeros(query[0].size)
    for j in range(width):
        if j in low:
            continue
        counts = np.bincount(train[j], minlength=n_values[j]).astype(float)
        logp += np.log((counts[query[j]] + 0.5) / (n + 0.5 * n_values[j]))
    if not low:
        return logp
    entropy = {}
    for j in low:
        p = np.bincount(train[j], minlength=n_values[j]) / n
        entropy[j] = -float(np.sum(p[p > 0] * np.log(p[p > 0])))
    info = np.full((width, width), -np.inf)
    for a_i, a in enumerate(low):
        for b in low[a_i + 1 :]:
            joint = np.bincount(train[a] * n_values[b] + train[b]) / n
            joint = joint[joint > 0]
            mutual = entropy[a] + entropy[b] + float(np.sum(joint * np.log(joint)))
            info[a, b] = info[b, a] = mutual
    # Prim's maximum spanning tree from the first column
    root = low[0]
    parent: dict[int, int | None] = {root: None}
    best = {j: (info[root, j], root) for j in low if j != root}
    while best:
        child = max(best, key=lambda j: best[j][0])
        parent[child] = best.pop(child)[1]
        for j in best:
            if info[child, j] > best[j][0]:
                best[j] = (info[child, j], child)
    for j, up in parent.items():
        k = n_values[j]
        if up is None:
            counts = np.bincount(train[j], minlength=k).astype(float)
            logp += np.log((counts[query[j]] + 0.5) / (n + 0.5 * k))
            continue
        pair = np.bincount(train[up] * k + train[j], minlength=n_values[up] * k)
        given = np.bincount(train[up], minlength=n_values[up]).astype(float)
        logp += np.log(
            (pair[query[up] * k + query[j]] + 0.5) / (given[query[up]] + 0.5 * k)
        )
    return logp


def _repeated_people(
    real: pd.DataFrame,
    holdout: pd.DataFrame,
    columns: Sequence[str],
    codes_real: np.ndarray,
    codes_hold: np.ndarray,
    keys: Sequence[str],
) -> dict[str, JSONValue]:
    """Shared records far beyond a model of independent people (panel data split by rows)."""
    n_real, n_hold = len(real), len(holdout)
    out: dict[str, JSONValue] = {"likely": False}
    if n_real < 2 or n_hold < 1:
        return out
    both = pd.concat([real[list(columns)], holdout[list(columns)]], ignore_index=True)
    codes = _column_codes(both)
    n_values = [int(c.max()) + 1 if c.size else 1 for c in codes]
    train = [c[:n_real] for c in codes]
    query = [c[n_real:] for c in codes]
    p_hold = np.exp(_tree_log_probability(train, query, n_values))
    chance = float(
        np.mean(-np.expm1(n_real * np.log1p(-np.minimum(p_hold, 1 - 1e-12))))
    )
    shared = int(np.isin(codes_hold, codes_real).sum())
    share = shared / n_hold
    within = float(_duplicated_within(codes_real).mean())
    p_value = _binomial_p(shared, n_hold, chance)
    likely = bool(
        not keys
        and p_value < ALPHA
        and share >= PANEL_FACTOR * chance
        and share - chance >= PANEL_MIN_EXCESS
        and within >= PANEL_FACTOR * chance
    )
    return {
        "likely": likely,
        "share": share,
        "model_share": chance,
        "training_repeat_share": within,
        "p_value": p_value,
    }


def _repeated_text(repeated: dict[str, JSONValue]) -> str:
    return (
        f"the holdout and training tables share identical rows far beyond chance: "
        f"{_pct(repeated['share'])} of the holdout rows repeat a training row, where a model "
        f"of independent people expects about {_pct(repeated['model_share'])}, and "
        f"{_pct(repeated['training_repeat_share'])} of the training rows repeat another "
        "training row. The table likely has several rows per person, and the same people "
        "are likely on both sides: the holdout control then compares people with "
        "themselves. Give a person key (`--param identification.person=COLUMN`, or keep "
        "the id column) and split the data by person (all of a person's rows on one side). "
        "Without one the verdict judges rows, not people: a generator that never saw the "
        "training rows still passes, but a copy of one person's yearly row may match the "
        "same person's row in the holdout, so copies of whole people can read as no excess, "
        "and the per-person tests count rows, not people."
    )


# ------------------------------------------------------------------------ population


def _features(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """Numeric matrix for the classifier: numbers as centred ranks, category indicators."""
    parts = []
    for column in columns:
        values = frame[column]
        if pd.api.types.is_bool_dtype(values):
            values = values.astype(float)
        if pd.api.types.is_datetime64_any_dtype(values):
            values = values.astype("int64").where(values.notna())
        if pd.api.types.is_numeric_dtype(values):
            x = values.to_numpy(dtype=float, na_value=np.nan)
            missing = ~np.isfinite(x)
            if missing.all():
                continue
            # ranks (share of rows below, centred): any magnitude, no overflow
            ranks = pd.Series(np.where(missing, np.nan, x)).rank(pct=True).to_numpy()
            parts.append(np.where(missing, 0.0, ranks - 0.5))
            if missing.any():
                parts.append(missing.astype(float))
            continue
        text = values.astype(str).where(values.notna(), "<missing>")
        top = text.value_counts().index[:MAX_CATEGORIES]
        # positions among the top categories; -1 for the rest (no Categorical: values
        # outside its categories are deprecated there)
        codes = pd.Index(top).get_indexer(text.to_numpy())
        for i in range(len(top)):
            parts.append((codes == i).astype(float))
        if (codes < 0).any():
            parts.append((codes < 0).astype(float))
    if not parts:
        return np.zeros((len(frame), 1))
    return np.column_stack(parts)


def _population(
    real: pd.DataFrame, holdout: pd.DataFrame, columns: Sequence[str], *, seed: int
) -> dict[str, JSONValue]:
    """Cross-validated AUC of a classifier telling holdout rows from training rows."""
    take = min(len(real), len(holdout), CLASSIFIER_ROWS)
    try:
        from sklearn.linear_model import LogisticRegression
        from threadpoolctl import threadpool_limits
    except (
        ImportError
    ):  # scikit-learn is a core dependency; a broken install skips this
        return {
            "auc": None,
            "ci": None,
            "rows_per_side": take,
            "shifted": False,
            "skipped": "scikit-learn is not importable (pip install scikit-learn)",
        }

    rng = np.random.default_rng([seed, 0x401D])
    if take < 20:
        return {"auc": None, "ci": None, "rows_per_side": take, "shifted": False}
    rows_real = rng.choice(len(real), take, replace=False)
    rows_hold = rng.choice(len(holdout), take, replace=False)
    both = pd.concat(
        [real[list(columns)].iloc[rows_real], holdout[list(columns)].iloc[rows_hold]],
        ignore_index=True,
    )
    x = _features(both, columns)
    y = np.r_[np.zeros(take), np.ones(take)]
    fold = np.r_[rng.permutation(take) % 2, rng.permutation(take) % 2]
    scores = np.empty(2 * take)
    # small matrices: one BLAS thread is fastest, and spares a busy machine
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in (0, 1):
            model = LogisticRegression(C=1.0, solver="newton-cholesky", max_iter=50)
            model.fit(x[fold != k], y[fold != k])
            scores[fold == k] = model.decision_function(x[fold == k])
    auc, se = delong_auc(scores[y == 1], scores[y == 0])
    half = float(sps.norm.ppf(0.5 + AUC_CONFIDENCE / 2)) * se
    lo, hi = max(0.0, auc - half), min(1.0, auc + half)
    return {
        "auc": auc,
        "ci": [lo, hi],
        "confidence_level": AUC_CONFIDENCE,
        "tolerance": AUC_TOLERANCE,
        "rows_per_side": take,
        "shifted": bool(lo > AUC_TOLERANCE),
    }


def _population_text(population: dict[str, JSONValue]) -> str:
    ci = population["ci"]
    assert isinstance(ci, list)
    return (
        "the holdout does not look like new people from the training population: a "
        f"classifier tells holdout rows from training rows with AUC {_num(population['auc'])} "
        f"[{_num(ci[0])}, {_num(ci[1])}] (0.5 when they are alike; tolerance "
        f"{AUC_TOLERANCE:g}). The holdout control is invalid: an attack's excess on the "
        "training rows then mixes leakage with the difference between the populations, "
        "and the verdict cannot pass. Draw the holdout at random from the same data as the "
        "training rows, before training."
    )


def _pct(value: Any) -> str:
    share = float(value)
    return (
        f"{100 * share:.1f} %"
        if share >= 0.001 or share == 0
        else f"{100 * share:.2g} %"
    )


def _num(value: Any) -> str:
    x = float(value)
    if x != 0 and abs(x) < 0.001:
        return f"{x:.1e}"
    return f"{x:.3g}" if math.isfinite(x) else str(x)
