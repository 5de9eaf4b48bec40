# SPDX-License-Identifier: BSD-3-Clause
"""A differentially private generator for the audit's tests: a Laplace histogram.

Module level, so that worker processes can pickle it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: fixed (data-independent) bin edges of the continuous columns of ``population``
X_EDGES = np.array([-4.0, -1.5, -0.75, -0.25, 0.25, 0.75, 1.5, 4.0])
Y_EDGES = np.array([0.0, 0.75, 1.5, 2.5, 4.0, 6.0, 12.0])
CATEGORIES = ("a", "b", "c", "d")
#: the fixed cells: bins of ``x`` times bins of ``y`` times the categories of ``c``
N_CELLS = (len(X_EDGES) - 1) * (len(Y_EDGES) - 1) * len(CATEGORIES)


def _cells(train: pd.DataFrame) -> np.ndarray:
    """Each training row's fixed cell (-1 where ``c`` is not a known category)."""
    ny, nc = len(Y_EDGES) - 1, len(CATEGORIES)
    x = np.clip(train["x"].to_numpy(float), X_EDGES[0], X_EDGES[-1] - 1e-9)
    y = np.clip(train["y"].to_numpy(float), Y_EDGES[0], Y_EDGES[-1] - 1e-9)
    ix = np.searchsorted(X_EDGES, x, side="right") - 1
    iy = np.searchsorted(Y_EDGES, y, side="right") - 1
    ic = pd.Categorical(train["c"], categories=CATEGORIES).codes
    return np.where(ic >= 0, (ix * ny + iy) * nc + ic, -1)


def _place(g: np.random.Generator, drawn: np.ndarray) -> pd.DataFrame:
    """One output row per drawn cell, placed uniformly inside it (post-processing)."""
    ny, nc = len(Y_EDGES) - 1, len(CATEGORIES)
    ic_out, rest = drawn % nc, drawn // nc
    iy_out, ix_out = rest % ny, rest // ny
    return pd.DataFrame(
        {
            "x": g.uniform(X_EDGES[ix_out], X_EDGES[ix_out + 1]),
            "y": g.uniform(Y_EDGES[iy_out], Y_EDGES[iy_out + 1]),
            "c": np.asarray(CATEGORIES)[ic_out],
        }
    )


class DPHistogram:
    """ε-differentially private synthesizer: a noisy histogram of fixed cells.

    The training rows are counted in fixed cells (bins of ``x`` and ``y`` whose edges do
    not depend on the data, times the categories of ``c``); every count gets Laplace noise
    of scale ``1 / ε``. Adding or removing one person changes one count by 1 (L1
    sensitivity 1 under add / remove neighbours, the relation of the audit's game, where
    each target joins or not), so the noisy histogram is ε-DP (Dwork, McSherry, Nissim &
    Smith 2006). The output rows are drawn from the noisy counts clipped at 0 and placed
    uniformly inside their cell: post-processing, so the output is ε-DP too.
    """

    def __init__(self, epsilon: float) -> None:
        self.epsilon = epsilon

    def __call__(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        g = np.random.default_rng(seed)
        cell = _cells(train)
        counts = np.bincount(cell[cell >= 0], minlength=N_CELLS).astype(float)
        noisy = np.clip(
            counts + g.laplace(scale=1.0 / self.epsilon, size=counts.size), 0, None
        )
        total = noisy.sum()
        p = noisy / total if total > 0 else np.full(counts.size, 1.0 / counts.size)
        drawn = g.choice(counts.size, size=n, p=p)
        return _place(g, drawn)


class DPPresence:
    """ε-differentially private synthesizer that canaries can read almost exactly.

    The training rows are counted in the fixed cells of :class:`DPHistogram`; each
    cell's presence bit (at least one training row in it) is released by randomized
    response: kept with probability ``e^ε / (1 + e^ε)``, flipped otherwise. Adding or
    removing one person changes at most one cell's bit, and randomized response on one
    bit is ε-DP, so the released bits are ε-DP (the other bits are the same on both
    neighbours). The output has one row, placed uniformly inside its cell, per released
    1 (post-processing). A record alone in an otherwise empty cell, as a worst-case
    canary is, is then seen exactly as well as ε allows: the mechanism on which a bound
    with canaries comes closest to the true ε, and so the test of its validity.
    """

    def __init__(self, epsilon: float) -> None:
        self.epsilon = epsilon

    def __call__(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        g = np.random.default_rng(seed)
        cell = _cells(train)
        present = np.bincount(cell[cell >= 0], minlength=N_CELLS) > 0
        keep = g.random(present.size) < np.exp(self.epsilon) / (
            1 + np.exp(self.epsilon)
        )
        drawn = np.flatnonzero(np.where(keep, present, ~present))
        return _place(g, drawn)
