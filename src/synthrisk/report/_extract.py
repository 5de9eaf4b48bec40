# SPDX-License-Identifier: BSD-3-Clause
"""Read the shapes the renderer knows out of a result's JSON form, whatever its metric.

The renderer never imports metric code. It recognises *shapes* in a result entry
(``{"metric", "score", "breakdown", "ci", "records", …}``):

* attack rates: ``attack_rate`` / ``baseline_rate`` / ``control_rate`` in the breakdown
  (flat with ``*_err`` keys, or nested ``{"value", "error"}``), or in a ``petsard``
  sub-mapping of the breakdown (the Anonymeter family's copy in PETsARD's layout);
* ROC points: a mapping with equally long ``fpr`` and ``tpr`` lists anywhere in the
  breakdown (two levels deep at most);
* distance distributions: records named ``*_to_real``, ``*_to_holdout`` …;
* per-record risks: records whose ``table`` is ``real``.

A new metric family that uses these shapes gets its plots without a change here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "distance_records",
    "find_roc",
    "finite_values",
    "is_probability",
    "number",
    "rates",
    "real_records",
    "record_arrays",
]

_RATE_NAMES = ("attack_rate", "baseline_rate", "control_rate")


def number(value: Any) -> float | None:
    """``value`` as a finite float, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _rate(
    source: Mapping[str, Any], name: str
) -> tuple[float | None, float | None] | None:
    if name not in source:
        return None
    entry = source[name]
    if isinstance(entry, Mapping):
        return number(entry.get("value")), number(entry.get("error"))
    return number(entry), number(source.get(f"{name}_err"))


def rates(
    result: Mapping[str, Any],
) -> dict[str, tuple[float | None, float | None]] | None:
    """``{"attack_rate": (value, error), …}`` when the breakdown has attack rates, else None."""
    breakdown = result.get("breakdown") or {}
    if not isinstance(breakdown, Mapping):
        return None
    for source in (breakdown, breakdown.get("petsard")):
        if not isinstance(source, Mapping):
            continue
        found = {name: _rate(source, name) for name in _RATE_NAMES}
        if found["attack_rate"] is not None:
            return {name: value for name, value in found.items() if value is not None}
    return None


def find_roc(result: Mapping[str, Any]) -> dict[str, Any] | None:
    """``{"fpr": [...], "tpr": [...], "auc": float | None, "key": str}`` from the breakdown, else None."""
    breakdown = result.get("breakdown") or {}

    def roc_of(entry: Any) -> dict[str, Any] | None:
        if not isinstance(entry, Mapping):
            return None
        fpr, tpr = entry.get("fpr"), entry.get("tpr")
        if not (isinstance(fpr, Sequence) and isinstance(tpr, Sequence)) or isinstance(
            fpr, str
        ):
            return None
        if len(fpr) != len(tpr) or len(fpr) < 2:
            return None
        xs, ys = [number(v) for v in fpr], [number(v) for v in tpr]
        if any(v is None for v in xs + ys):
            return None
        auc = None
        for key in ("auc", "roc_auc", "roc_auc_score"):
            auc = auc if auc is not None else number(entry.get(key))
        return {"fpr": xs, "tpr": ys, "auc": auc}

    if not isinstance(breakdown, Mapping):
        return None
    found = roc_of(breakdown)
    if found is not None:
        found["key"] = ""
        return found
    for key, entry in breakdown.items():
        found = roc_of(entry)
        if found is None and isinstance(entry, Mapping):
            for sub_key, sub_entry in entry.items():
                found = roc_of(sub_entry)
                if found is not None:
                    found["key"] = f"{key}.{sub_key}"
                    break
        elif found is not None:
            found["key"] = str(key)
        if found is not None:
            if found["auc"] is None:
                for name in ("auc", "roc_auc", "roc_auc_score"):
                    found["auc"] = (
                        found["auc"]
                        if found["auc"] is not None
                        else number(breakdown.get(name))
                    )
            return found
    return None


def _records(result: Mapping[str, Any]) -> Mapping[str, Any]:
    records = result.get("records") or {}
    return records if isinstance(records, Mapping) else {}


def _has_values(rec: Any) -> bool:
    if not isinstance(rec, Mapping):
        return False
    values = rec.get("values")
    return values is not None and len(values) > 0


def distance_records(result: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Record sets named ``<from>_to_<to>`` (distance distributions), in their order."""
    return {
        name: rec
        for name, rec in _records(result).items()
        if "_to_" in name and _has_values(rec)
    }


def real_records(result: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Record sets on the real table (per-record risks of real rows)."""
    return {
        name: rec
        for name, rec in _records(result).items()
        if _has_values(rec) and rec.get("table") == "real"
    }


def _as_floats(values: Any) -> np.ndarray:
    """``values`` as float64, NaN where an entry is not a finite number."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiu":
        out = np.asarray(values, dtype=np.float64)
        return np.where(np.isfinite(out), out, np.nan)
    checked = [number(v) for v in values]
    return np.array([np.nan if v is None else v for v in checked], dtype=np.float64)


def record_arrays(record: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Row positions and values of a record set as arrays, NaN for non-finite values.

    Works on a result's arrays (a report rendered in the same process, millions of
    rows) and on its JSON lists alike; entries past the shorter of the two are dropped.
    """
    values = _as_floats(
        record.get("values") if record.get("values") is not None else ()
    )
    raw_index = record.get("index")
    index = np.asarray([] if raw_index is None else raw_index, dtype=np.int64)
    n = min(index.size, values.size)
    return index[:n], values[:n]


def finite_values(record: Mapping[str, Any]) -> np.ndarray:
    """The record set's values that are finite numbers, in their order."""
    values = _as_floats(
        record.get("values") if record.get("values") is not None else ()
    )
    return values[~np.isnan(values)]


def is_probability(record: Mapping[str, Any]) -> bool:
    """True when every finite value lies in [0, 1] (a risk or a 0/1 outcome)."""
    values = finite_values(record)
    return bool(values.size) and bool(np.all((values >= 0.0) & (values <= 1.0)))
