# SPDX-License-Identifier: BSD-3-Clause
"""Blocked exact neighbour search on torch tensors: a CUDA device when present, else the CPU.

The same blocked algorithm as the numpy reference backend, on tensors: for a block of
query rows, the summed terms against a block of reference rows are computed in
float64 with the same operations in the same order (categorical mismatches first,
then numeric columns in column order; ``|x - y|``, ``/ scale``, clip, square), so every
distance is bit for bit the numpy backend's. A running top k per query row is merged
with each reference block by a stable sort on ``(distance, index)``: the running
entries come first and hold lower indices, so ties go to the lowest reference index.
Results are identical to the numpy and numba backends.

Memory on the device: the reference table, the query block and one (query block ×
reference block) matrix of float64, sized from ``working_memory``.

Needs the ``gpu`` extra (``pip install 'synthrisk[gpu]'``, which installs PyTorch).
The device is ``cuda`` when ``torch.cuda.is_available()``; set the environment
variable ``SYNTHRISK_TORCH_DEVICE`` (e.g. ``cpu`` or ``cuda:1``) to choose one.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from synthrisk._optional import import_optional
from synthrisk._typing import FloatArray, IntArray
from synthrisk.neighbors._blocks import rows_per_block
from synthrisk.neighbors._protocol import Search
from synthrisk.neighbors._spec import DistanceSpec

__all__ = ["device", "kneighbors"]

_REFERENCE_BLOCK = 8192


def device() -> Any:
    """The torch device the backend runs on."""
    torch = import_optional("torch", extra="gpu")
    name = os.environ.get("SYNTHRISK_TORCH_DEVICE")
    if name:
        return torch.device(name)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _block_sums(
    torch: Any,
    q_num: Any,
    q_cat: Any,
    r_num: Any,
    r_cat: Any,
    spec: DistanceSpec,
    scale: Any,
) -> Any:
    """Summed terms of shape (n_query_block, n_reference_block), as numpy_backend.block_sums."""
    acc = torch.zeros(
        (q_num.shape[0], r_num.shape[0]), dtype=torch.float64, device=q_num.device
    )
    for c in range(q_cat.shape[1]):
        acc += (q_cat[:, c][:, None] != r_cat[:, c][None, :]).to(torch.float64)
    nan_one = torch.tensor(spec.nan_one, dtype=torch.float64, device=acc.device)
    nan_both = torch.tensor(spec.nan_both, dtype=torch.float64, device=acc.device)
    # columns without a missing value on either side skip the missing-value rule
    # (one small reduction per column, instead of three full-size kernels)
    missing = (
        (torch.isnan(q_num).any(dim=0) | torch.isnan(r_num).any(dim=0)).cpu().tolist()
        if q_num.shape[1]
        else []
    )
    for f in range(q_num.shape[1]):
        x = q_num[:, f][:, None]
        y = r_num[:, f][None, :]
        diff = torch.abs(x - y)
        if spec.indicator[f]:
            term = (diff > 0).to(torch.float64)
        else:
            # a one-element tensor on the device: a true division (see the module docstring)
            term = diff.div_(scale[f : f + 1])
            if spec.clip:
                term = term.clamp_(max=1.0)
        if spec.power == 2:
            term = term.mul_(term)
        if missing[f]:
            x_nan = torch.isnan(x)
            y_nan = torch.isnan(y)
            term = torch.where(
                x_nan & y_nan, nan_both, torch.where(x_nan | y_nan, nan_one, term)
            )
        acc += term
    return acc


def kneighbors(search: Search) -> tuple[FloatArray, IntArray]:
    """:meth:`NeighborBackend.kneighbors` on torch tensors (see the module docstring)."""
    q_num, q_cat, r_num, r_cat = search.q_num, search.q_cat, search.r_num, search.r_cat
    spec, k, progress = search.spec, search.k, search.progress
    torch = import_optional("torch", extra="gpu")
    dev = device()
    n_query, n_ref = q_num.shape[0], r_num.shape[0]
    distances = np.empty((n_query, k), dtype=np.float64)
    indices = np.empty((n_query, k), dtype=np.int64)
    ref_block = min(n_ref, _REFERENCE_BLOCK)
    # about six float64 temporaries of one (query row x reference block) each
    step = rows_per_block(
        48 * ref_block, working_memory=search.working_memory, n_rows=n_query
    )
    scale = torch.from_numpy(np.asarray(spec.scale, dtype=np.float64).copy()).to(dev)
    r_num_t = torch.from_numpy(np.ascontiguousarray(r_num)).to(dev)
    r_cat_t = torch.from_numpy(np.ascontiguousarray(r_cat)).to(dev)
    inf = torch.tensor(math.inf, dtype=torch.float64, device=dev)
    for start in range(0, n_query, step):
        stop = min(start + step, n_query)
        q_num_t = torch.from_numpy(np.ascontiguousarray(q_num[start:stop])).to(dev)
        q_cat_t = torch.from_numpy(np.ascontiguousarray(q_cat[start:stop])).to(dev)
        rows = stop - start
        best_key = torch.empty((rows, 0), dtype=torch.float64, device=dev)
        best_sum = torch.empty((rows, 0), dtype=torch.float64, device=dev)
        best_idx = torch.empty((rows, 0), dtype=torch.int64, device=dev)
        for r0 in range(0, n_ref, ref_block):
            r1 = min(r0 + ref_block, n_ref)
            sums = _block_sums(
                torch, q_num_t, q_cat_t, r_num_t[r0:r1], r_cat_t[r0:r1], spec, scale
            )
            key = torch.where(torch.isnan(sums), inf, sums)
            idx = torch.arange(r0, r1, device=dev).expand(rows, r1 - r0)
            all_key = torch.cat([best_key, key], dim=1)
            all_sum = torch.cat([best_sum, sums], dim=1)
            all_idx = torch.cat([best_idx, idx], dim=1)
            order = torch.sort(all_key, dim=1, stable=True).indices[:, :k]
            best_key = torch.gather(all_key, 1, order)
            best_sum = torch.gather(all_sum, 1, order)
            best_idx = torch.gather(all_idx, 1, order)
        if spec.power == 2:
            out = torch.sqrt(best_sum) / spec.divisor
        else:
            out = best_sum / spec.divisor
        distances[start:stop] = out.cpu().numpy()
        indices[start:stop] = best_idx.cpu().numpy()
        if progress is not None:
            progress(rows)
    return distances, indices
