# SPDX-License-Identifier: BSD-3-Clause
"""synthpop's identity and attribute disclosure measures (``disclosure()``), exactly.

For a set of key columns ``q`` and a target column ``t``, synthpop 1.9's
``disclosure.synds`` builds the two-way tables of target by key combination in the
original data (``d``) and the synthetic data (``s``) and reports, as percentages:

* identity disclosure: ``UiO`` (original records unique on the keys), ``UiS`` (synthetic
  records unique on the keys, over the synthetic size), ``UiOiS`` (original uniques whose
  key combination appears in the synthetic data), ``repU`` (original uniques whose key
  combination is also unique in the synthetic data, the *replicated uniques*);
* attribute disclosure: ``Dorig`` (DiO: original records whose key combination has one
  target value in the original data, what the original alone discloses), ``Dsyn``,
  ``iS`` (original records whose keys appear in the synthetic data), ``DiS``, ``DiSCO``
  (original records whose keys appear in the synthetic data with one target value, and
  that value is theirs), ``DiSDiO``, ``DCAP`` (mean share of the synthetic records with a
  record's keys that carry its target), ``TCAP`` (the same among records whose keys are
  target-unique in the synthetic data) and ``baseCAP`` (sum of squared target shares).

Missing values are a level of their own (``"Missing"``); numeric columns are matched
on their exact values (synthpop turns them into factors unless ``ngroups_*`` is set).
Exclusions follow synthpop: ``not.targetlev``, ``usetargetNA``, ``usekeysNA`` and
``exclude_ov_denom_lim`` zero cells of every table *after* the tables that decide
disclosure (``did``, ``dis``, ``iS``, ``DiS``, ``DiSCO``, ``DiSDiO``) were built
from the unexcluded proportions, and before the identity and CAP measures.

References
----------
G. M. Raab, B. Nowok, C. Dibben (2025), "Practical privacy metrics for synthetic data",
arXiv:2406.16826; synthpop ``disclosure()`` documentation and vignette "Disclosure
risk measures for synthetic data".
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from synthrisk._typing import FloatArray, IntArray

__all__ = ["SynthpopDisclosure", "synthpop_disclosure"]


@dataclasses.dataclass(frozen=True)
class SynthpopDisclosure:
    """synthpop's measures (percentages, named as in synthpop) and per-record flags."""

    ident: dict[str, float]
    attrib: dict[str, float]
    all_caps: dict[str, float]
    attrib_denoms: dict[str, float]
    #: per original record: 1 if counted in repU
    rep_unique: FloatArray
    #: per original record: 1 if counted in DiSCO
    disco: FloatArray
    #: per original record: 1 if counted in Dorig (DiO)
    dio: FloatArray
    #: per original record: share of synthetic records with its keys that carry its target (DCAP term)
    dcap: FloatArray
    #: cells of the DiSCO table: (key id, target id, original records disclosed)
    disco_cells: tuple[IntArray, IntArray, IntArray]


def _percent(numerator: Any, denominator: Any) -> float:
    return (
        float(numerator) / float(denominator) * 100.0 if denominator else float("nan")
    )


def synthpop_disclosure(
    keys_orig: IntArray,
    target_orig: IntArray,
    keys_syn: IntArray,
    target_syn: IntArray,
    *,
    n_targets: int,
    excluded_keys: np.ndarray | None = None,
    excluded_targets: np.ndarray | None = None,
    denom_lim: int | None = None,
) -> SynthpopDisclosure:
    """synthpop's ``disclosure()`` measures from integer key and target ids.

    Parameters
    ----------
    keys_orig, target_orig : ndarray of shape (n_orig,)
        Key-combination id and target id of each original record.
    keys_syn, target_syn : ndarray of shape (n_syn,)
        The same for each synthetic record (ids shared with the original).
    n_targets : int
        Number of target ids (every id is below it).
    excluded_keys : ndarray of bool, default=None
        Per key id: True where the combination is excluded (synthpop's ``usekeysNA``).
    excluded_targets : ndarray of bool, default=None
        Per target id: True where the level is excluded (``not.targetlev``,
        ``usetargetNA``).
    denom_lim : int, default=None
        With a value, cells above it are excluded (``exclude_ov_denom_lim = TRUE``).
    """
    n_d, n_s = keys_orig.size, keys_syn.size
    t = np.int64(n_targets)
    cell_d = keys_orig.astype(np.int64) * t + target_orig
    cell_s = keys_syn.astype(np.int64) * t + target_syn
    cells, inverse = np.unique(np.r_[cell_d, cell_s], return_inverse=True)
    inverse = inverse.ravel()
    inv_d, inv_s = inverse[:n_d], inverse[n_d:]
    n_cells = cells.size
    nd = np.bincount(inv_d, minlength=n_cells).astype(np.float64)
    ns = np.bincount(inv_s, minlength=n_cells).astype(np.float64)
    cell_key_id = cells // t
    cell_target = cells % t
    keys, cell_key = np.unique(cell_key_id, return_inverse=True)
    cell_key = cell_key.ravel()
    n_keys = keys.size
    kd = np.bincount(cell_key, weights=nd, minlength=n_keys)
    ks = np.bincount(cell_key, weights=ns, minlength=n_keys)

    # tables that decide disclosure, from the unexcluded proportions
    ps_one = (ks[cell_key] > 0) & (ns == ks[cell_key])
    pd_one = (kd[cell_key] > 0) & (nd == kd[cell_key])
    any_dis = np.bincount(cell_key, weights=ps_one, minlength=n_keys) > 0
    did = np.where(pd_one, nd, 0.0)
    dis = np.where(ps_one, ns, 0.0)
    t_is = np.where(ks[cell_key] > 0, nd, 0.0)
    t_dis = np.where(any_dis[cell_key], nd, 0.0)
    t_disco = np.where(ps_one, nd, 0.0)
    t_disdio = np.where(pd_one, t_disco, 0.0)
    keys_in_syn = ks > 0
    target_counts = np.bincount(target_orig, minlength=n_targets).astype(np.float64)

    excluded = np.zeros(n_cells, dtype=bool)
    if excluded_keys is not None:
        excluded |= np.asarray(excluded_keys, dtype=bool)[cell_key_id]
    if excluded_targets is not None:
        excluded |= np.asarray(excluded_targets, dtype=bool)[cell_target]

    def exclude(values: FloatArray) -> FloatArray:
        out = np.where(excluded, 0.0, values)
        if denom_lim is not None:
            out = np.where(out > denom_lim, 0.0, out)
        return out

    nd2, ns2 = exclude(nd), exclude(ns)
    did, dis, t_is, t_dis = exclude(did), exclude(dis), exclude(t_is), exclude(t_dis)
    t_disco, t_disdio = exclude(t_disco), exclude(t_disdio)

    # identity disclosure
    kd2 = np.bincount(cell_key, weights=nd2, minlength=n_keys)
    ks2 = np.bincount(cell_key, weights=ns2, minlength=n_keys)
    ident = {
        "UiO": _percent(np.sum(kd2 == 1), n_d),
        "UiS": _percent(np.sum(ks2 == 1), n_s),
        "UiOiS": _percent(np.sum((kd2 == 1) & keys_in_syn), n_d),
        "repU": _percent(np.sum((kd2 == 1) & (ks2 == 1)), n_d),
    }
    positive = t_disco[t_disco > 0]
    attrib = {
        "Dorig": _percent(did.sum(), n_d),
        "Dsyn": _percent(dis.sum(), n_s),
        "iS": _percent(t_is.sum(), n_d),
        "DiS": _percent(t_dis.sum(), n_d),
        "DiSCO": _percent(t_disco.sum(), n_d),
        "DCAPd": float("nan"),
        "DiSDiO": _percent(t_disdio.sum(), n_d),
        "max_denom": float(t_disco.max()) if n_cells else float("nan"),
        "mean_denom": float(positive.mean()) if positive.size else float("nan"),
    }

    # CAP measures on the excluded tables
    with np.errstate(invalid="ignore", divide="ignore"):
        pd2 = np.where(kd2[cell_key] > 0, nd2 / kd2[cell_key], 0.0)
        ps2 = np.where(ks2[cell_key] > 0, ns2 / ks2[cell_key], 0.0)
    n_s_both = float(ks2[kd2 > 0].sum())
    dcap_num = float(np.sum(ps2 * nd2))
    unique_s = (ps2 == 1.0).astype(np.float64)
    tcap_num = float(np.sum(unique_s * nd2))
    denom_tcap = float(np.sum(kd2[cell_key] * unique_s))
    attrib["DCAPd"] = _percent(dcap_num, n_d)
    all_caps = {
        "baseCAPd": float(np.sum((target_counts / n_d) ** 2) * 100.0)
        if n_d
        else float("nan"),
        "CAPd": _percent(np.sum(pd2**2 * kd2[cell_key]), n_d),
        "CAPs": _percent(np.sum(ps2**2 * ks2[cell_key]), n_s),
        "DCAPb": _percent(dcap_num, n_s_both),
        "DCAPs": _percent(dcap_num, n_s),
        "TCAPb": _percent(tcap_num, n_s_both),
        "TCAPs": _percent(tcap_num, n_s),
        "TCAP": _percent(tcap_num, denom_tcap),
    }
    attrib_denoms = {
        "denom_DiSCO": float(n_d),
        "denom_TCAPb": float(n_s),
        "denom_TCAPs": float(n_s_both),
        "denom_TCAP": denom_tcap,
    }
    kept = nd2[inv_d] > 0
    row_key = cell_key[inv_d]
    rep_unique = (kept & (kd2[row_key] == 1) & (ks2[row_key] == 1)).astype(np.float64)
    disco = (t_disco[inv_d] > 0).astype(np.float64)
    dio = (did[inv_d] > 0).astype(np.float64)
    dcap = np.where(kept, ps2[inv_d], np.nan)
    live = t_disco > 0
    cells_out = (
        cell_key_id[live].astype(np.int64),
        cell_target[live].astype(np.int64),
        t_disco[live].astype(np.int64),
    )
    return SynthpopDisclosure(
        ident, attrib, all_caps, attrib_denoms, rep_unique, disco, dio, dcap, cells_out
    )
