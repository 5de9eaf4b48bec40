# SPDX-License-Identifier: BSD-3-Clause
"""Equivalence-class statistics: k-anonymity, l-diversity, t-closeness, k-map, δ-presence.

Every function works on integer codes: ``classes`` (the quasi-identifier combination
of each record, ids shared by all tables) and ``sensitive`` (the sensitive value of
each record). Classes are exact combinations of the declared quasi-identifiers, not
clusters.

References
----------
L. Sweeney (2002), "k-anonymity: a model for protecting privacy"; A. Machanavajjhala
et al. (2007), "l-diversity: privacy beyond k-anonymity" (distinct, entropy and
recursive (c, l)-diversity); N. Li, T. Li, S. Venkatasubramanian (2007),
"t-closeness: privacy beyond k-anonymity and l-diversity" (earth mover's distance with
equal and ordered ground distances); K. El Emam, F. K. Dankar (2008), "Protecting
privacy using k-anonymity" (k-map); M. E. Nergiz, M. Atzori, C. Clifton (2007),
"Hiding the presence of individuals from shared databases" (δ-presence).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from synthrisk._typing import FloatArray, IntArray

__all__ = ["ClassStatistics", "class_statistics"]

#: at most this many (class, value) cells at a time in the ordered t-closeness
_ORDERED_BLOCK = 4_000_000


@dataclasses.dataclass(frozen=True)
class ClassStatistics:
    """Per-class statistics of one table (arrays indexed by class id)."""

    size: IntArray
    distinct: IntArray
    entropy_l: FloatArray
    recursive_l: IntArray
    t_distance: FloatArray

    def summary(self) -> dict[str, float | int | None]:
        """The table's k, l and t (the worst class of each)."""
        present = self.size > 0
        if not present.any():
            return {
                "k": None,
                "distinct_l": None,
                "entropy_l": None,
                "recursive_l": None,
                "t": None,
            }
        return {
            "k": int(self.size[present].min()),
            "distinct_l": int(self.distinct[present].min()),
            "entropy_l": float(self.entropy_l[present].min()),
            "recursive_l": int(self.recursive_l[present].min()),
            "t": float(self.t_distance[present].max()),
            "n_classes": int(present.sum()),
        }


def _ordered_emd(
    cell_class: IntArray,
    cell_value: IntArray,
    p: FloatArray,
    q: FloatArray,
    n_classes: int,
) -> FloatArray:
    """Ordered EMD per class: ``sum_i |sum_{j<=i} (p_j - q_j)| / (m - 1)``, values in code order."""
    m = q.size
    out = np.zeros(n_classes)
    if m < 2:
        return out
    per_block = max(1, _ORDERED_BLOCK // m)
    order = np.argsort(cell_class, kind="stable")
    cell_class, cell_value, p = cell_class[order], cell_value[order], p[order]
    cq = np.cumsum(q)
    for start in range(0, n_classes, per_block):
        stop = min(n_classes, start + per_block)
        lo, hi = np.searchsorted(cell_class, [start, stop])
        dense = np.zeros((stop - start, m))
        dense[cell_class[lo:hi] - start, cell_value[lo:hi]] = p[lo:hi]
        out[start:stop] = np.abs(np.cumsum(dense, axis=1) - cq).sum(axis=1) / (m - 1)
    return out


def class_statistics(
    classes: IntArray,
    sensitive: IntArray | None,
    *,
    n_classes: int,
    n_values: int,
    reference: IntArray | None = None,
    c: float = 2.0,
    ordered: bool = False,
) -> ClassStatistics:
    """k, l (distinct, entropy, recursive) and t of every equivalence class of one table.

    Parameters
    ----------
    classes : ndarray of shape (n,)
        Class id of each record.
    sensitive : ndarray of shape (n,) or None
        Sensitive value id of each record (None: only sizes are computed).
    n_classes, n_values : int
        Number of class ids and of sensitive value ids.
    reference : ndarray, default=None
        Sensitive ids of the table whose overall distribution t-closeness compares with
        (default: ``sensitive`` itself).
    c : float, default=2.0
        The ``c`` of recursive (c, l)-diversity.
    ordered : bool, default=False
        Ordered ground distance in t-closeness (value ids in their order, for ordinal
        or numerical sensitive columns); else the equal distance (total variation).
    """
    size = np.bincount(classes, minlength=n_classes)
    if sensitive is None:
        zeros = np.zeros(n_classes)
        return ClassStatistics(
            size, size.clip(max=1), zeros + 1.0, size.clip(max=1), zeros
        )
    nv = np.int64(max(n_values, 1))
    cells, counts = np.unique(
        classes.astype(np.int64) * nv + sensitive, return_counts=True
    )
    cell_class, cell_value = cells // nv, cells % nv
    distinct = np.bincount(cell_class, minlength=n_classes)
    p = counts / size[cell_class]
    entropy = np.bincount(cell_class, weights=-p * np.log(p), minlength=n_classes)
    # recursive (c, l): counts sorted descending within each class; the largest l with
    # r_1 < c * (r_l + ... + r_m); the condition holds for l = 1 .. l_max
    order = np.lexsort((-counts, cell_class))
    cls_sorted, cnt_sorted = cell_class[order], counts[order].astype(np.float64)
    starts = np.r_[0, np.flatnonzero(np.diff(cls_sorted)) + 1]
    group = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, cls_sorted.size]))
    before = np.cumsum(cnt_sorted) - cnt_sorted
    suffix = size[cls_sorted] - (before - before[starts][group])
    first = cnt_sorted[starts][group]
    recursive = np.bincount(
        cls_sorted, weights=first < c * suffix, minlength=n_classes
    ).astype(np.int64)
    ref = sensitive if reference is None else reference
    q = np.bincount(ref, minlength=int(nv)) / max(ref.size, 1)
    if ordered:
        t_distance = _ordered_emd(cell_class, cell_value, p, q, n_classes)
    else:
        inside = np.bincount(
            cell_class,
            weights=np.abs(p - q[cell_value]) - q[cell_value],
            minlength=n_classes,
        )
        t_distance = np.where(size > 0, 0.5 * (inside + 1.0), 0.0)
    return ClassStatistics(size, distinct, np.exp(entropy), recursive, t_distance)
