# SPDX-License-Identifier: BSD-3-Clause
"""Column-by-column two-sample tests: does each synthetic column follow the real one?

The membership attacks only mean something when the synthetic data resembles the real
data: a generator producing noise is "private" for the wrong reason. IBM
ai-privacy-toolkit runs these checks before each attack
(``KNNAttackStrategyUtils.validate_distributions``); this metric runs them on their own,
with APT's bugs fixed:

* the chi-square test compares the two samples' category counts (a 2-by-L contingency
  table); APT passes one column as both observed and expected frequencies, so the
  statistic is 0 (or NaN) and categorical columns are never flagged;
* the Cramér-von Mises test compares synthetic with real; APT compares the synthetic
  column with itself (p = 1 always);
* every column kind is tested (APT skips all columns of float32, int32, bool or
  object arrays and reports them valid);
* a multiple-testing correction (Holm by default) over all tests; APT tests each
  column at ``alpha`` (``correction="none"`` restores that);
* a test that cannot run is reported as such (APT reports "validated").
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats

from synthrisk._typing import JSONValue
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import Param, custom, number, option
from synthrisk.metrics._threat import ThreatModel
from synthrisk.schema.tables import Tables

__all__ = [
    "CATEGORICAL_TESTS",
    "CORRECTIONS",
    "NUMERIC_TESTS",
    "DistributionValidation",
    "adjust_p_values",
    "two_sample_test",
]

NUMERIC_TESTS = ("KS", "CVM", "AD", "ES")
CATEGORICAL_TESTS = ("CHI", "AD", "ES")
CORRECTIONS = ("holm", "bonferroni", "fdr_bh", "none")


def adjust_p_values(p_values: np.ndarray, method: str) -> np.ndarray:
    """Adjusted p-values (NaN entries are left out and stay NaN).

    ``holm`` (step-down, controls the family-wise error), ``bonferroni``, ``fdr_bh``
    (Benjamini-Hochberg false discovery rate) or ``none``.
    """
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    q = p[ok]
    m = q.size
    if m == 0 or method == "none":
        out[ok] = q
        return out
    if method == "bonferroni":
        out[ok] = np.minimum(q * m, 1.0)
        return out
    order = np.argsort(q, kind="stable")
    ranked = q[order]
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum((m - np.arange(m)) * ranked, 1.0))
    else:  # fdr_bh
        adj = np.minimum.accumulate(m / np.arange(m, 0, -1) * ranked[::-1])[::-1]
        adj = np.minimum(adj, 1.0)
    result = np.empty(m)
    result[order] = adj
    out[ok] = result
    return out


def _anderson(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    with warnings.catch_warnings():
        # SciPy warns when it clips the interpolated p-value to [0.001, 0.25]; documented
        warnings.filterwarnings(
            "ignore", message="p-value (capped|floored)", category=UserWarning
        )
        try:
            res = stats.anderson_ksamp([x, y], variant="midrank")
        except TypeError:  # SciPy < 1.17 has no `variant`
            warnings.simplefilter("ignore", DeprecationWarning)
            res = stats.anderson_ksamp([x, y], midrank=True)
    return float(res.statistic), float(res.pvalue)


def two_sample_test(
    test: str, x: np.ndarray, y: np.ndarray, *, caveats: list[str] | None = None
) -> tuple[float, float]:
    """Statistic and p-value of a two-sample test of ``x`` (synthetic) vs ``y`` (real).

    ``KS`` Kolmogorov-Smirnov, ``CVM`` Cramér-von Mises, ``AD`` Anderson-Darling
    (k-sample, midrank; SciPy interpolates its p-value within [0.001, 0.25]), ``ES``
    Epps-Singleton, ``CHI`` chi-square test of the 2-by-L contingency table of category
    counts (``x`` and ``y`` hold category labels). Raises ``ValueError`` or
    ``LinAlgError`` when the test cannot run on these samples. SciPy's own caveats
    (for example Epps-Singleton's rank-deficient covariance on discrete data) are
    appended to ``caveats`` instead of being emitted as warnings.
    """
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        warnings.simplefilter(
            "ignore", RuntimeWarning
        )  # degenerate samples: the p-value says it (NaN)
        result = _two_sample_test(test, x, y)
    if caveats is not None:
        caveats.extend(str(w.message) for w in caught)
    return result


def _two_sample_test(test: str, x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    if test == "CHI":
        labels = np.r_[x, y]
        _, inverse = np.unique(labels, return_inverse=True)
        counts = np.zeros((2, int(inverse.max()) + 1 if inverse.size else 0))
        np.add.at(counts[0], inverse[: x.size], 1.0)
        np.add.at(counts[1], inverse[x.size :], 1.0)
        if counts.shape[1] < 2:
            return 0.0, 1.0
        res = stats.chi2_contingency(counts)
        return float(res.statistic), float(res.pvalue)
    if test == "KS":
        res = stats.ks_2samp(x, y)
    elif test == "CVM":
        res = stats.cramervonmises_2samp(x, y)
    elif test == "AD":
        return _anderson(x, y)
    else:
        res = stats.epps_singleton_2samp(x, y)
    return float(res.statistic), float(res.pvalue)


def _features(value: Any, name: str) -> list[str | int]:
    features: list[str | int] = []
    if value is None:
        return features
    if isinstance(value, (str, int)) or not isinstance(value, Sequence):
        msg = f"`{name}` must be a list of column names or positions; got {value!r}."
        raise ParameterError(msg)
    for item in value:
        if isinstance(item, bool) or not isinstance(item, (str, int, np.integer)):
            msg = f"`{name}` entries must be column names or positions; got {item!r}."
            raise ParameterError(msg)
        features.append(item if isinstance(item, str) else int(item))
    return features


@register
class DistributionValidation(Metric):
    """Per-column two-sample tests of synthetic vs real (and vs holdout): is the synthetic data faithful?

    Numeric and datetime columns get ``numeric_test``, categorical and boolean columns
    (and those named in ``categorical_features``) ``categorical_test``; synthetic is
    compared with real, and with the holdout when one is given. All p-values of the
    run are adjusted with ``correction``; a column "differs" when an adjusted p-value
    is below ``alpha``. The score is the share of columns that differ in no
    comparison (1 = every column validated). It is a fidelity check that qualifies
    the membership attacks, not a privacy score.

    Parameters
    ----------
    numeric_test : {"KS", "CVM", "AD", "ES"}, default="KS"
        Kolmogorov-Smirnov, Cramér-von Mises, Anderson-Darling, Epps-Singleton.
    categorical_test : {"CHI", "AD", "ES"}, default="CHI"
        Chi-square on the contingency table of category counts (missing is a
        category); AD and ES compare the category codes as numbers, as APT does.
    alpha : float, default=0.05
        Significance level.
    correction : {"holm", "bonferroni", "fdr_bh", "none"}, default="holm"
        Multiple-testing correction; ``"none"`` is APT's behaviour.
    categorical_features : list of str or int, default=None
        Columns to test as categorical whatever their kind (names, or positions in
        the table's columns); useful for integer-coded categories.
    """

    id = "distribution_validation"
    report_order = 180
    attack = (
        "Not an attack: checks that each synthetic column follows the real distribution, without which "
        "the membership attacks' verdicts are meaningless."
    )
    threat_model = ThreatModel(
        attacker_holds="nothing (not an attack: a fidelity check of the synthetic table against the real one)",
        target="no one (it says how to read the attacks)",
        meaning=(
            "share of columns whose synthetic distribution does not differ significantly from the real one (two-sample tests, Holm-adjusted): 1 = every column follows it"
        ),
    )
    higher_is_safer = True

    numeric_test: Param[str] = Param(
        option(NUMERIC_TESTS), "KS", "Test of numeric and datetime columns."
    )
    categorical_test: Param[str] = Param(
        option(CATEGORICAL_TESTS), "CHI", "Test of categorical and boolean columns."
    )
    alpha: Param[float] = Param(number(gt=0, lt=1), 0.05, "Significance level.")
    correction: Param[str] = Param(
        option(CORRECTIONS), "holm", "Multiple-testing correction of the p-values."
    )
    categorical_features: Param[list[str | int], Sequence[str | int] | None] = Param(
        custom(_features, "a list of column names or positions"),
        None,
        "Columns to test as categorical whatever their kind.",
    )

    def _categorical_names(self, tables: Tables) -> set[str]:
        names = tables.schema.names
        out = set()
        for item in self.categorical_features:
            if isinstance(item, int):
                if not -len(names) <= item < len(names):
                    msg = (
                        f"`categorical_features` position {item} is out of range for a table of "
                        f"{len(names)} columns {names}."
                    )
                    raise ParameterError(msg)
                out.add(names[item])
            elif item in names:
                out.add(item)
            else:
                msg = f"`categorical_features` names columns that are not in the tables: [{item!r}]. Available columns: {names}."
                raise ParameterError(msg)
        excluded = sorted(n for n in out if tables.schema[n].excluded)
        if excluded:
            msg = f"`categorical_features` names excluded (id, pii or text) columns {excluded}; they are never tested."
            raise ParameterError(msg)
        return out

    def check_tables(self, tables: Tables) -> None:
        """Check that ``categorical_features`` names existing columns."""
        self._categorical_names(tables)

    def _column_values(
        self, tables: Tables, table: str, name: str, categorical: bool
    ) -> np.ndarray:
        enc = tables.encoded(table)
        if name in enc.numeric_names:
            col = enc.numeric[:, enc.numeric_names.index(name)]
            if categorical:
                return np.where(
                    np.isnan(col), np.inf, col
                )  # missing is its own category
            return col[~np.isnan(col)]
        codes = enc.codes[:, enc.categorical_names.index(name)]
        return codes.astype(np.float64)

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        categorical = self._categorical_names(tables)
        alpha = self.alpha
        others = ["real"] + (["holdout"] if tables.holdout is not None else [])
        rows: list[tuple[str, str, str, float, float, str | None]] = []
        kinds: dict[str, tuple[str, str]] = {}
        for spec in tables.schema.modelable:
            is_cat = spec.kind in ("categorical", "boolean") or spec.name in categorical
            test = str(self.categorical_test if is_cat else self.numeric_test)
            kinds[spec.name] = ("categorical" if is_cat else "numeric", test)
            x = self._column_values(tables, "synthetic", spec.name, is_cat)
            for other in others:
                y = self._column_values(tables, other, spec.name, is_cat)
                statistic, p_value, error = float("nan"), float("nan"), None
                if test != "CHI":
                    # AD / ES / KS / CVM compare numbers; missing values are left out
                    x_t, y_t = x[np.isfinite(x)], y[np.isfinite(y)]
                else:
                    x_t, y_t = x, y
                if min(x_t.size, y_t.size) < 2:
                    error = f"fewer than 2 values ({x_t.size} synthetic, {y_t.size} {other})"
                else:
                    try:
                        caveats: list[str] = []
                        statistic, p_value = two_sample_test(
                            test, x_t, y_t, caveats=caveats
                        )
                        for caveat in dict.fromkeys(caveats):
                            context.warn(
                                f"{test} test of column {spec.name!r} vs {other}: {caveat}"
                            )
                    except (ValueError, np.linalg.LinAlgError) as exc:
                        error = f"{type(exc).__name__}: {exc}"
                if error is None and math.isnan(p_value):
                    error = "the test returned no p-value"
                rows.append((spec.name, other, test, statistic, p_value, error))
        p_adj = adjust_p_values(np.array([r[4] for r in rows]), self.correction)
        columns: dict[str, Any] = {
            name: {"kind": kind, "test": test} for name, (kind, test) in kinds.items()
        }
        differ: dict[str, list[str]] = {other: [] for other in others}
        failed = []
        for (name, other, _test, statistic, p_value, error), adjusted in zip(
            rows, p_adj, strict=True
        ):
            entry: dict[str, Any] = {
                "statistic": None if math.isnan(statistic) else statistic,
                "p_value": None if math.isnan(p_value) else p_value,
                "p_adjusted": None if math.isnan(adjusted) else float(adjusted),
                "different": bool(not math.isnan(adjusted) and adjusted < alpha),
            }
            if error is not None:
                entry["error"] = error
                failed.append(f"{name} vs {other} ({error})")
            if entry["different"]:
                differ[other].append(name)
            columns[name][other] = entry
        if failed:
            context.warn(f"some tests could not run: {'; '.join(failed)}.")
        n_columns = len(kinds)
        differing = set(differ["real"]) | set(differ.get("holdout", []))
        if differing:
            context.warn(
                f"{len(differing)} of {n_columns} synthetic column(s) differ from the real data "
                f"({sorted(differing)}); membership results partly reflect fidelity, not only memorisation."
            )
        score = (n_columns - len(differing)) / n_columns if n_columns else float("nan")
        breakdown: dict[str, JSONValue] = {
            "distributions_valid": not differing,
            "distributions_validated": not failed,
            "member_column_distribution_diff": differ["real"],
            "non_member_column_distribution_diff": differ.get("holdout"),
            "columns": columns,
            "alpha": alpha,
            "correction": self.correction,
            "n_tests": len(rows),
        }
        return Outcome(score=score, breakdown=breakdown)
